# poolscope's container image. Three stages: `build` compiles TypeScript and the /debug page with every
# dependency; `deps` installs the production dependencies alone; the final stage holds only those, the
# compiled dist/ and the bin/ launcher, and runs as a non-root user.
#
#   docker build -t poolscope:0.1.0 .
#   docker run --rm -p 8080:8080 poolscope:0.1.0                 # serve, memory store
#   docker run --rm poolscope:0.1.0 relay --help                  # any other command

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# --ignore-scripts: `prepare` would build before the sources are here; the build runs below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY machines ./machines
COPY src ./src
RUN npm run build

FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

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
# /healthz answers 200 while the process serves and can read its store (serve's default --listen port).
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# poolscope handles SIGTERM itself (serve drains; relay and simulate stop), also as PID 1.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "bin/poolscope.js"]
CMD ["serve"]
