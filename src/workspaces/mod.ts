export * from "./service.ts";
