#!/usr/bin/env bash
# Builds poolscope's image from the Dockerfile with this machine's npm configuration (registry, proxy,
# CA certificates) as the BuildKit secret `npmrc`, never written into a layer; host networking, so the
# build reaches what this machine reaches and nothing else.
#
#   scripts/build-image.sh [TAG]        # default poolscope:0.1.0
#
# Needs Debian's docker.io client (20.10, BuildKit built in) or a newer one with the buildx plugin.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-poolscope:$(node -p 'require("./package.json").version')}
docker_bin=${DOCKER:-$( [ -x /usr/bin/docker ] && echo /usr/bin/docker || command -v docker)}
npmrc=$(mktemp)
trap 'rm -f "$npmrc"' EXIT
node scripts/npmrc-secret.mjs >"$npmrc"
DOCKER_BUILDKIT=1 "$docker_bin" build --network host --secret "id=npmrc,src=$npmrc" -t "$tag" .
