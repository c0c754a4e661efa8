// Prisma CLI configuration. DATABASE_URL is read from process.env (not env()), so that
// `prisma generate` also works without a database.
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "./prisma/schema.prisma",
  migrations: { path: "./prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "" },
});
