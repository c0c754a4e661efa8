/**
 * The readable types of src/supervisor: the workspace's supervisor conversation and its messages,
 * declared with Pothos (src/graphql/types/supervisor.ts).
 */
import { declaredType, enumType } from "../shared/view.ts";

export const SupervisorRole = enumType(
  "SupervisorRole",
  ["USER", "ASSISTANT", "TOOL"],
  "USER: a person's (or API token's) message; ASSISTANT: the supervisor's answer to it.",
);

export const supervisorMessageView = declaredType("SupervisorMessage");

export const supervisorConversationView = declaredType("SupervisorConversation");
