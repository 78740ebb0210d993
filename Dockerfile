# Build stage: install everything, compile TypeScript. (`npm ci` runs the `prepare` script,
# scripts/build.mjs, which has nothing to build before the sources are copied and says so.)
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY models ./models
# bench/ is not in the build context (.dockerignore): the image ships no benchmark code.
RUN npx tsc -p tsconfig.json

# Production dependencies only (native lmdb and uWS binaries come prebuilt from npm).
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
RUN npm ci --omit=dev --no-audit --no-fund

# Runtime: compiled code, production node_modules, the trained model. No dev dependencies.
FROM node:20-bookworm-slim
# GLIBC_TUNABLES: malloc returns large blocks to the system when they are freed (README,
# "Memory"; the same setting `npm start` uses).
ENV NODE_ENV=production \
    GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072 \
    PORT=8000 \
    HOST=0.0.0.0 \
    SERVICE_DATA_DIR=/data
WORKDIR /app
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY models ./models
COPY dashboard ./dashboard
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8000
# Readiness (GET /ready: store writable, worker pool answering, evaluation current), with the
# node binary the image already has (no curl in the slim image). Orchestrators with separate
# probes should use GET / for liveness and GET /ready for readiness.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8000)+'/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM drains in-flight requests and flushes LMDB before exiting.
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
