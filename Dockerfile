# First version of the production image: build stage compiles, final stage runs with production dependencies only.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json prisma.config.ts ./
COPY prisma ./prisma
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY prisma/migrations ./prisma/migrations
COPY bin ./bin
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
# Migrations on PostgreSQL: run `node bin/rubrica.js db deploy` once, or set MIGRATE_ON_START=true.
CMD ["node", "dist/server.js"]
