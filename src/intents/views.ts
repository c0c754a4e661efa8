/** The readable type of src/intents (see shared/view.ts). */
import { defineView, type JsonObjectType } from "../shared/view.ts";
import { MessageType } from "./schemas.ts";
import { HttpMethod } from "../webhooks/schemas.ts";
import { presentUrl } from "../webhooks/views.ts";

export const RequiredFieldType: JsonObjectType = {
  name: "RequiredField",
  description: "A field the model must fill in the intent's tag; sent to the intent webhook.",
  fields: { name: { type: "String" }, type: { type: "String" }, description: { type: "String" } },
};

/** An intent: the agent emits its tag to call `webhookUrl`. */
export const intentView = defineView({
  name: "Intent",
  label: "Intent",
  table: "Intent",
  fields: {
    id: { type: "ID" },
    agentId: { type: "ID" },
    name: { type: "String" },
    tag: {
      type: "String",
      description: "The tag name: `name` lowercased, spaces and underscores as hyphens.",
    },
    description: { type: "String" },
    triggerOnTypes: { type: MessageType, list: true },
    requiredFields: { type: RequiredFieldType, list: true },
    webhookUrl: {
      type: "String",
      description: "Credential-like query values are masked for AGENT and VIEWER.",
      present: presentUrl,
    },
    webhookMethod: { type: HttpMethod },
    createdAt: { type: "DateTime" },
    updatedAt: { type: "DateTime" },
  },
});
