export * from "./service.ts";
export { intentTag, TRANSFER_TAG } from "./tag.ts";
