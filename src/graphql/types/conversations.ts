/** The declared types of src/conversations: contacts (conversations and messages are still views). */
import { builder } from "../builder.ts";
import { typePlan } from "../declared.ts";

export const Contact = builder.prismaObject("Contact", {
  extensions: typePlan({ label: "Contact", workspaceColumn: "workspaceId" }),
  fields: (t) => ({
    id: t.exposeID("id"),
    externalId: t.exposeString("externalId", {
      description: "The customer's address on the channel (WhatsApp: the phone number).",
    }),
    name: t.exposeString("name"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});
