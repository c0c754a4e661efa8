/** The declared types of src/webhooks: a delivery's attempts (webhooks and deliveries are still views). */
import { builder } from "../builder.ts";
import { typePlan } from "../declared.ts";

export const WebhookDeliveryAttempt = builder.prismaObject("DeliveryAttempt", {
  name: "WebhookDeliveryAttempt",
  extensions: typePlan({ label: "Attempt" }),
  fields: (t) => ({
    number: t.exposeInt("number", { description: "1-based, counted across redeliveries." }),
    startedAt: t.expose("startedAt", { type: "DateTime" }),
    durationMs: t.exposeInt("durationMs"),
    httpStatus: t.exposeInt("httpStatus", {
      nullable: true,
      description: "The receiver's status; null when no answer came (connection error, timeout, refused).",
    }),
    error: t.exposeString("error", { nullable: true }),
  }),
});
