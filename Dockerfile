# syntax=docker/dockerfile:1
# rubrica's production image. The `build` stage installs from the lockfile, generates the Prisma client,
# compiles to dist/ and prunes to production dependencies; the final stage copies only what runs.
#
# scripts/container-check.sh builds this file with buildah and runs the image (docs/deployment.md, "How the image
# is proven").
#
# Node 24 is an LTS line supported until April 2028, and the version this image has been proven with: .node-version
# pins the exact 24.x that CI runs the tests on and the container check builds its stand-in base image with. An ARG
# cannot read that file, so test/node-versions.test.ts fails when this default's major and the file's differ: change both.
# Node 26 (LTS since October 2026) is a --build-arg away once proven.
# trixie-slim: current Debian stable, without compilers or curl; nothing here needs native builds.
# For reproducible production builds, pin the digest: --build-arg NODE_IMAGE=node:24-trixie-slim@sha256:…
ARG NODE_IMAGE=node:24-trixie-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Manifests first, so the dependency layer is reused while only sources change.
COPY package.json package-lock.json ./
# No dependency needs an install script: Prisma's engine download is not used (see the build) and may be
# unreachable; turning them off makes the install the same everywhere.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json prisma.config.ts openapi.json ./
COPY prisma ./prisma
COPY src ./src
COPY scripts/build-if-needed.js ./scripts/
# build-if-needed runs `npm run build` (Prisma client, OpenAPI types, tsc) and writes dist/.build-stamp:
# with the stamp, bin/rubrica.js in the final image finds dist/ up to date and never tries to rebuild.
RUN node scripts/build-if-needed.js
# --omit=optional as well: the prisma CLI and typescript are optional peers of @prisma/client, which npm
# marks devOptional and keeps under --omit=dev alone. The only optional runtime package, pg-cloudflare,
# is loaded by pg on Cloudflare Workers only. node_modules/.cache holds the build's compiled prisma.config.ts.
RUN npm prune --omit=dev --omit=optional --no-audit --no-fund && rm -rf node_modules/.cache

FROM ${NODE_IMAGE}
# Metrics are off by default (two instances on one host would collide on the port); the image turns them on,
# on all interfaces: METRICS_HOST's default, loopback, is unreachable from outside a container. No demo key on
# an empty database: printed on stdout, it would land in `docker logs` and every log collector; the first tenant
# and key are made with the CLI (docs/deployment.md, "Containers").
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data METRICS_ENABLED=true METRICS_HOST=0.0.0.0 METRICS_PORT=9464 \
    DEMO_ON_EMPTY=false
WORKDIR /app
# Everything under /app stays owned by root: the service user can read it, not change it.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/scripts/build-if-needed.js ./scripts/
COPY --from=build /app/prisma/migrations ./prisma/migrations
COPY bin ./bin
# The embedded database's directory (used when DATABASE_URL is unset) is the only writable place. It must
# exist with this owner before VOLUME, so that a new named volume starts out writable by the service user.
RUN mkdir -p /data && chown 1000:1000 /data
VOLUME /data
# The base image's `node` user, by number: Kubernetes' runAsNonRoot can only verify a numeric user.
USER 1000:1000
EXPOSE 3000 9464
# No curl in slim images: Node's own fetch asks /health (liveness only; /ready also checks the database).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/health`, { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node is PID 1 here and rubrica handles SIGTERM and SIGINT itself (graceful close within SHUTDOWN_GRACE_MS).
# One-shot migrations on PostgreSQL: docker run --rm -e DATABASE_URL=… <image> node bin/rubrica.js db deploy
CMD ["node", "dist/server.js"]
