# Build stage: Prisma's and Pothos' generators run under Node, so generate with Node (24 LTS) + Deno.
FROM node:24-bookworm AS build
WORKDIR /app
RUN npm install --prefix /opt/deno --no-audit --no-fund deno@2.9.6
# DENO_DIR inside the tree that is copied on, so the run stage starts from a warm cache.
ENV PATH=/opt/deno/node_modules/.bin:$PATH DENO_DIR=/app/.deno
COPY . .
# The document reader runs as a child process (src/media/_document_worker.ts): cache it too.
# `setup` also builds the web console into web/dist/, which the run stage serves at `/`.
RUN deno task setup && deno cache src/main.ts src/admin.ts src/media/_document_worker.ts

# Run stage: the official Deno image (Debian) with the installed packages and the generated client.
FROM denoland/deno:2.9.6
WORKDIR /app
# The image's unprivileged `deno` user owns the app, so the embedded PostgreSQL runs as that user
# too (as root it would have to switch to a `postgres` user; see docs/behaviour.md, "Running the server").
COPY --from=build --chown=deno:deno /app /app
RUN mkdir -p /app/.data && chown deno:deno /app/.data
# APP_ENV=production: no GraphiQL or introspection, and a generated first-owner password goes to
# /app/.data/bootstrap-password (0600) instead of the log. NODE_ENV=production: graphql-js skips
# its development checks (as `deno task start`).
ENV HOST=0.0.0.0 PORT=8080 APP_ENV=production DATA_DIR=/app/.data NODE_ENV=production DENO_DIR=/app/.deno
USER deno
EXPOSE 8080
# GET /healthz (200 once migrated and listening, 503 while the database does not answer) with Deno
# itself: the image has no curl or wget. A first start (the embedded PostgreSQL's initdb, every
# migration) takes longer than the next ones, hence the start period.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["deno", "run", "--no-config", "--allow-net", "--allow-env=PORT,HOST", "tools/healthcheck.ts"]
# Without DATABASE_URL the embedded PostgreSQL keeps its data in /app/.data (mount a volume there).
VOLUME ["/app/.data"]
# --no-memory-reducer (as `deno task start`): V8 keeps the heap it grew through a lull instead of
# shrinking it, so the first requests after a quiet spell are not slowed by growing it back.
CMD ["deno", "run", "-A", "--unstable-no-legacy-abort", "--v8-flags=--no-memory-reducer", "src/main.ts"]
