# Build stage: Prisma's and Pothos' generators run under Node, so generate with Node + Deno here.
FROM node:20-bookworm AS build
WORKDIR /app
RUN npm install --prefix /opt/deno --no-audit --no-fund deno@2.9.6
ENV PATH=/opt/deno/node_modules/.bin:$PATH
COPY . .
RUN deno task setup && deno cache src/main.ts

# Run stage: the official Deno image with the installed packages and the generated client.
FROM denoland/deno:2.9.6
WORKDIR /app
COPY --from=build /app /app
# NODE_ENV=production: graphql-js skips its multi-realm instanceof checks (as `deno task start`).
ENV HOST=0.0.0.0 PORT=8080 APP_ENV=production DATA_DIR=/app/.data NODE_ENV=production
EXPOSE 8080
# Without DATABASE_URL the embedded PostgreSQL keeps its data in /app/.data (mount a volume there).
VOLUME ["/app/.data"]
CMD ["deno", "run", "-A", "--unstable-no-legacy-abort", "src/main.ts"]
