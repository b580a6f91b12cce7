# Playline: build with the dev dependencies, run with the production ones only.
#   docker build -t playline .
#   docker run -p 8080:8080 -v playline-data:/var/lib/playline -v playline-media:/var/lib/playline-media playline
# Cluster mode: compose.yaml. Debian (bookworm) base: its ffmpeg package serves the media features.

FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 ships prebuilt binaries for this platform; the toolchain is its fallback.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Scripts off: `prepare` builds, and the sources are not here yet; native modules are rebuilt next.
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm rebuild better-sqlite3 esbuild
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
# tini reaps children (ffmpeg) and forwards signals, so SIGTERM stops the server gracefully.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg tini ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system playline \
 && useradd --system --gid playline --home-dir /var/lib/playline --shell /usr/sbin/nologin playline \
 && mkdir -p /var/lib/playline /var/lib/playline-media \
 && chown playline:playline /var/lib/playline /var/lib/playline-media
ENV NODE_ENV=production \
    PLAYLINE_HOST=0.0.0.0 \
    PLAYLINE_PORT=8080 \
    PLAYLINE_DATA_DIR=/var/lib/playline \
    PLAYLINE_MEDIA_DIR=/var/lib/playline-media
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER playline
# Data: the SQLite database, the statistics journal, the secret key file. Media: uploads and HLS.
VOLUME ["/var/lib/playline", "/var/lib/playline-media"]
# 8080: the API, dashboard and playback; 20000-20099: the slicers' ingest listeners (PLAYLINE_SLICER_PORTS),
# TCP for RTMP and HLS push, UDP for SRT and RIST. Set PLAYLINE_PUBLIC_HOST to the host encoders reach,
# else the ingest URLs name 127.0.0.1 (the container's own loopback).
EXPOSE 8080 20000-20099/tcp 20000-20099/udp
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PLAYLINE_PORT ?? 8080}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--max-semi-space-size=4", "/app/dist/cli/bin.js"]
CMD ["serve"]
