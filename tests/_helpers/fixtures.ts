/** Request bodies the role and isolation matrices create records with (REST and GraphQL alike). */

/** An intent without its name (each test names its own, as tags must differ within an agent). */
export const INTENT_FIELDS = {
  description: "d",
  triggerOnTypes: ["TEXT"],
  requiredFields: [],
  webhookUrl: "https://example.com/i",
};

/** An event webhook with one registered header. */
export const HOOK = { event: "message.sent", url: "https://example.com/w", headers: { "X-Key": "k" } };

/** An intent that asks for one field, for the input and race tests. */
export const DATE_INTENT = {
  name: "Agendar",
  description: "d",
  triggerOnTypes: ["TEXT"],
  requiredFields: [{ name: "date", type: "string", description: "day" }],
  webhookUrl: "https://example.com/i",
};
