# Build stage: install everything, compile TypeScript.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY workers ./workers
COPY bench ./bench
COPY models ./models
RUN npx tsc -p tsconfig.json

# Production dependencies only (native lmdb and uWS binaries come prebuilt from npm).
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# Runtime: compiled code, production node_modules, the trained model. No dev dependencies.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    PORT=8000 \
    HOST=0.0.0.0 \
    SERVICE_DATA_DIR=/data
WORKDIR /app
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY models ./models
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8000
# SIGTERM drains in-flight requests and flushes LMDB before exiting.
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
