#!/usr/bin/env bash
# Makes the base images the Dockerfile and the container tests name, from Debian's packages, for a
# machine that reaches Debian's mirror and the npm registry but no container registry:
#
#   node:20-bookworm-slim   Debian bookworm (debootstrap --variant=minbase) with this machine's own Node 20
#                           and npm copied in, and a `node` user 1000:1000, as the official image has
#   redis:7.2               the same base with Debian's redis-server, run as the `redis` user (a stand-in:
#                           Debian's Redis is 7.0, which is all the tests need)
#
# The minbase root file system is kept as a tarball (POOLSCOPE_BASES_CACHE, default
# /var/cache/poolscope-bases) and reused; an image already present is kept unless --force is given.
# Where a registry is reachable, `docker pull` of the real images does the same job.
set -euo pipefail
cd "$(dirname "$0")/.."

force=0
[ "${1:-}" = "--force" ] && force=1
cache=${POOLSCOPE_BASES_CACHE:-/var/cache/poolscope-bases}
suite=bookworm
mirror=${POOLSCOPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
base_tag=poolscope-base/debian:bookworm-minbase
node_tag=node:20-bookworm-slim
redis_tag=${POOLSCOPE_TEST_REDIS_IMAGE:-redis:7.2}
docker_bin=${DOCKER:-$( [ -x /usr/bin/docker ] && echo /usr/bin/docker || command -v docker)}
docker() { "$docker_bin" "$@"; }
present() { [ "$force" = 0 ] && docker image inspect "$1" >/dev/null 2>&1; }
say() { echo "container-bases: $*"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. The root file system, from the cache when present.
rootfs_tar="$cache/$suite-minbase.tar"
if [ ! -s "$rootfs_tar" ] || [ "$force" = 1 ]; then
  command -v debootstrap >/dev/null 2>&1 || { echo "container-bases: debootstrap missing (apt-get install debootstrap)" >&2; exit 1; }
  say "debootstrap --variant=minbase $suite (about a minute)"
  mkdir -p "$cache"
  debootstrap --variant=minbase "$suite" "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  # The host's apt settings (e.g. a mirror's relaxed Valid-Until) so apt-get inside works as it does here.
  cp /etc/apt/apt.conf.d/99* "$work/rootfs/etc/apt/apt.conf.d/" 2>/dev/null || true
  rm -rf "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/var/cache/apt/"*.bin
  tar -C "$work/rootfs" --numeric-owner -cf "$rootfs_tar.tmp" .
  mv "$rootfs_tar.tmp" "$rootfs_tar"
  rm -rf "$work/rootfs"
else
  say "reusing $rootfs_tar"
fi

if present "$base_tag"; then
  say "$base_tag present"
else
  docker import "$rootfs_tar" "$base_tag" >/dev/null
  say "imported $base_tag"
fi

# 2. Node: this machine's node binary and npm, as in the official image's layout (/usr/local).
if present "$node_tag"; then
  say "$node_tag present"
else
  node_bin=$(readlink -f "$(command -v node)")
  "$node_bin" -e 'process.exit(process.versions.node.split(".")[0] === "20" ? 0 : 1)' ||
    { echo "container-bases: the host's node is $("$node_bin" --version), not 20" >&2; exit 1; }
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  mkdir -p "$work/node"
  cp "$node_bin" "$work/node/node"
  cp -a "$npm_dir" "$work/node/npm"
  cat >"$work/node/Dockerfile" <<'DOCKERFILE'
FROM poolscope-base/debian:bookworm-minbase
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
 && node --version && npm --version
ENV NODE_VERSION=20
CMD ["node"]
DOCKERFILE
  DOCKER_BUILDKIT=0 docker build -q --network host -t "$node_tag" "$work/node" >/dev/null
  say "built $node_tag ($(docker run --rm --network host "$node_tag" node --version))"
fi

# 3. Redis: Debian's redis-server on the same base.
if present "$redis_tag"; then
  say "$redis_tag present"
else
  mkdir -p "$work/redis"
  cat >"$work/redis/Dockerfile" <<'DOCKERFILE'
FROM poolscope-base/debian:bookworm-minbase
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server redis-tools >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && redis-server --version
WORKDIR /data
RUN chown redis:redis /data
USER redis
CMD ["redis-server", "--protected-mode", "no", "--save", "", "--appendonly", "no"]
DOCKERFILE
  DOCKER_BUILDKIT=0 docker build -q --network host -t "$redis_tag" "$work/redis" >/dev/null
  say "built $redis_tag ($(docker run --rm --network host "$redis_tag" redis-server --version | cut -d' ' -f1-3))"
fi
