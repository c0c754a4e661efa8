/** What a person can do with one message, declared once (shared/capability.ts). */
import { defineOperation } from "../shared/capability.ts";
import { messageView } from "./views.ts";
import { resendMessage as resend } from "./resend.ts";

export const resendMessage = defineOperation({
  name: "resendMessage",
  summary:
    "Sends a FAILED outbound message (the agent's or a person's) again as a new message with the same content, " +
    "through the channel like any other; the failed one stays as it was. 409 MESSAGE_NOT_RESENDABLE, " +
    "MESSAGE_ALREADY_RESENT, CONVERSATION_CLOSED, WINDOW_CLOSED (a text outside WhatsApp's window). Answers the new message (REST: 201).",
  access: { kind: "workspace", action: "conversation:attend" },
  params: { messageId: "Message" },
  target: "messageId",
  output: { view: messageView },
  http: { method: "POST", path: "/api/messages/{messageId}/resend", status: 201 },
  run: (ctx, { messageId }) => resend(ctx, messageId),
});
