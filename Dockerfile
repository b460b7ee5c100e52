# poolscope's container image. Three stages: `build` compiles TypeScript and the /debug page with every
# dependency; `deps` installs the production dependencies alone; the final stage holds only those, the
# compiled dist/ (no typings: nothing in the image compiles against them) and the bin/ launcher, and runs
# as a non-root user.
#
#   DOCKER_BUILDKIT=1 docker build --network host -t poolscope:0.1.0 .
#   DOCKER_BUILDKIT=1 docker build --secret id=npmrc,src=$HOME/.npmrc -t poolscope:0.1.0 .   # a registry or CA of yours
#   docker run --rm -p 8080:8080 poolscope:0.1.0                  # serve, memory store
#   docker run --rm poolscope:0.1.0 relay --help                   # any other command
#
# npm in the build reads an optional `.npmrc` given as the BuildKit secret `npmrc` (registry, proxy, `ca=`
# for a network that re-signs TLS): mounted for the `npm ci` steps only, never written into a layer.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json npm-shrinkwrap.json .npmrc ./
# --ignore-scripts: `prepare` would build before the sources are here; the build runs below.
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build-debug-page.mjs scripts/copy-assets.mjs scripts/bundle.mjs ./scripts/
COPY machines ./machines
COPY src ./src
# The build starts the bundled command once (scripts/bundle.mjs) to make its code cache with this stage's
# Node, the final stage's too (the same base image).
COPY bin ./bin
RUN npm run build && find dist -name '*.d.ts' -delete

FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json npm-shrinkwrap.json .npmrc ./
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
# The image's `node` user, by number, so Kubernetes' runAsNonRoot can check it.
USER 1000:1000
EXPOSE 8080
# `poolscope healthcheck` probes /livez where serve serves: serve's --listen and --tls-cert-path, read from
# POOLSCOPE_SERVE_LISTEN and POOLSCOPE_SERVE_TLS_CERT_PATH (set those, not the flags, for the probe to
# follow). In a container running relay or simulate, which serve no HTTP, it passes while they run.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "bin/poolscope.js", "healthcheck"]
# poolscope handles SIGTERM itself (serve drains; relay and simulate stop), also as PID 1.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "bin/poolscope.js"]
CMD ["serve"]
