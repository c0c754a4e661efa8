export * from "./service.ts";
export { type FiredIntent, fireIntent } from "./fire.ts";
export { intentTag, TRANSFER_TAG } from "./tag.ts";
