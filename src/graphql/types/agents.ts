/**
 * The declared types of src/agents: an agent's prompt versions and counts. The read planner, REST
 * and OpenAPI read them from here (../declared.ts); the Agent type itself is still a view
 * (src/agents/views.ts) whose relations point here.
 */
import { builder } from "../builder.ts";
import { fieldPlan, typePlan } from "../declared.ts";

/** The agent's rows of `table`, counted in SQL (`t` aliases the agent's row). */
const counted = (table: string) =>
  fieldPlan({ sql: (t) => `(SELECT count(*)::int FROM "${table}" c WHERE c."agentId" = ${t}.id)` });

export const PromptVersion = builder.prismaObject("PromptVersion", {
  extensions: typePlan({ label: "Prompt version" }),
  fields: (t) => ({
    id: t.exposeID("id"),
    agentId: t.exposeID("agentId"),
    systemPrompt: t.exposeString("systemPrompt"),
    rationale: t.exposeString("rationale"),
    authorUserId: t.exposeID("authorUserId", { nullable: true }),
    authorLabel: t.exposeString("authorLabel"),
    revertedFrom: t.exposeID("revertedFrom", { nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

/** An agent's counts, as Prisma's `_count` of its relations names them (REST's `_count`). */
export interface AgentCountsShape {
  conversations: number;
  intents: number;
  numbers: number;
}

/** The counts of the agent list (`_count` over REST); `numbers` counts channels. */
export const AgentCounts = builder.objectRef<AgentCountsShape>("AgentCounts").implement({
  extensions: typePlan({ label: "Counts" }),
  fields: (t) => ({
    conversations: t.exposeInt("conversations", { extensions: counted("Conversation") }),
    intents: t.exposeInt("intents", { extensions: counted("Intent") }),
    numbers: t.exposeInt("numbers", {
      description: "Messaging channels (phone numbers) of the agent.",
      extensions: counted("Channel"),
    }),
  }),
});
