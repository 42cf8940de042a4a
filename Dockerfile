# syntax=docker/dockerfile:1
#
# One image, three roles (docs/design.md §2). The default command is the api; the same image runs
#   node --min-semi-space-size=32 --max-semi-space-size=32 --heap-growing-percent=30 --max-old-space-size=512 dist/src/main.worker.js
#                                   BullMQ worker (health + metrics on WORKER_HEALTH_PORT, default 8766)
#   node dist/src/main.migrate.js   migrations, once per release
# Override the command (Compose `command:`, Kubernetes `args:`) and keep the tini entrypoint.

# Node 24 LTS (22 supported; docs/design.md §13).
ARG NODE_IMAGE=node:24-bookworm-slim

# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app

# Dependencies first, so source edits do not invalidate the npm layer.
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    npm ci --no-audit --no-fund

COPY . .
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime

ARG VERSION=0.0.0-dev
LABEL org.opencontainers.image.title="hecate-server" \
      org.opencontainers.image.description="Hecate server: LLM gateway and task runtime" \
      org.opencontainers.image.version="${VERSION}"

# git + bubblewrap: the task runtime runs shell/git tools and isolates them with bwrap when it
# is available. openssh-client for git over ssh, ca-certificates for git over https.
# tini is PID 1: it forwards SIGTERM to node and reaps the grandchildren that tools leave behind.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap ca-certificates git openssh-client tini \
 && rm -rf /var/lib/apt/lists/*

RUN groupadd --gid 10001 hecate \
 && useradd --uid 10001 --gid 10001 --home-dir /home/hecate --create-home --shell /usr/sbin/nologin hecate

WORKDIR /app
# Application files stay owned by root: the process can read its code but not rewrite it.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The CLI (`npx hecate doctor`, `hecate migrate`, `hecate keys create`): a small wrapper around dist/src/cli.js.
COPY --from=build /app/bin ./bin
# GATEWAY_DATA_DIR (.data, relative to /app) is used by the embedded mode only.
RUN mkdir -p /app/.data && chown 10001:10001 /app/.data

# MALLOC_ARENA_MAX=2: two glibc malloc arenas for every role, however many cores the node has (glibc's default is 8 per
# core it sees, not per core of the pod's CPU limit); native memory no longer grows with the arenas the threads spread
# over (README, "Benchmarks").
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8765 \
    MALLOC_ARENA_MAX=2

USER 10001:10001
# 8765: api. 8766: worker health/metrics side port.
EXPOSE 8765 8766

ENTRYPOINT ["/usr/bin/tini", "--"]
# --min/--max-semi-space-size=32: a young generation of a fixed size (two 32 MB semi-spaces) for the api's allocation
# rate (fewer scavenges), committed from the start rather than grown and shrunk by V8 under load, so resident memory
# does not move with it (README, "Benchmarks"). Every role runs with it.
# --heap-growing-percent=30: the old generation's next full collection at 1.3 × what the last one kept, instead of
# the factor V8 adapts at run time (it starts low and creeps up under a steady load), so resident memory reaches its
# working level in the first minute instead of climbing for 10-15 minutes (bench/README.md, "Soak memory").
# --max-old-space-size: the old generation's limit for the role's memory (api 256 MB of 512 Mi, worker 512 MB of
# 2 Gi in the Helm chart) rather than derived from the host; V8 then lets it grow less far past the live data
# between full collections, and resident memory stays near its level of the first minute.
CMD ["node", "--min-semi-space-size=32", "--max-semi-space-size=32", "--heap-growing-percent=30", "--max-old-space-size=256", "dist/src/main.api.js"]
