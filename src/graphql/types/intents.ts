/** The declared type of src/intents: an intent, whose tag the agent emits to call `webhookUrl`. */
import { builder } from "../builder.ts";
import { presentedField, typePlan } from "../declared.ts";
import { enumOf, jsonObjectRef, type Row } from "../common_types.ts";
import { RequiredFieldType } from "../../intents/views.ts";
import { MessageType } from "../../intents/schemas.ts";
import { HttpMethod } from "../../webhooks/schemas.ts";
import { presentUrl } from "../../webhooks/views.ts";

/** The objects of a JSON array column (the service writes only arrays of RequiredField objects). */
function objectsOf(json: unknown): Row[] {
  if (!Array.isArray(json)) throw new Error("requiredFields is not a JSON array");
  return json.filter((item): item is Row =>
    item !== null && typeof item === "object" && !Array.isArray(item)
  );
}

export const Intent = builder.prismaObject("Intent", {
  extensions: typePlan({ label: "Intent" }),
  fields: (t) => ({
    id: t.exposeID("id"),
    agentId: t.exposeID("agentId"),
    name: t.exposeString("name"),
    tag: t.exposeString("tag", {
      description: "The tag name: `name` lowercased, spaces and underscores as hyphens.",
    }),
    description: t.exposeString("description"),
    triggerOnTypes: t.expose("triggerOnTypes", { type: [enumOf(MessageType)] }),
    requiredFields: t.field({
      type: [jsonObjectRef(RequiredFieldType)],
      resolve: (intent) => objectsOf(intent.requiredFields),
    }),
    webhookUrl: t.string({
      description: "Credential-like query values are masked for AGENT and VIEWER.",
      ...presentedField(presentUrl, (intent) => intent.webhookUrl),
    }),
    webhookMethod: t.expose("webhookMethod", { type: enumOf(HttpMethod) }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});
