/** The WhatsApp Cloud API channel: request checks, the inbound payload, outbound text. */
export { hubSignature, verifyHandshake, verifyHubSignature } from "./signature.ts";
export {
  type DeliveryState,
  type Dropped,
  type InboundMedia,
  type InboundMessage,
  type InboundMessageType,
  type InboundParse,
  parseWebhookBody,
  parseWebhookPayload,
  type StatusUpdate,
  type WhatsAppError,
} from "./inbound.ts";
export {
  classifyGraphError,
  GRAPH_TIMEOUT_MS,
  type GraphError,
  type OutboundRequest,
  type SendResult,
  sendText,
  type SendTextInput,
  WHATSAPP_TEXT_LIMIT,
} from "./graph_api.ts";
