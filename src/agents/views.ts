/** The readable types of src/agents: declared with Pothos (src/graphql/types/agents.ts). */
import { declaredType } from "../shared/view.ts";

/** An agent with every field of GET /api/agents/{id}. */
export const agentView = declaredType("Agent");
