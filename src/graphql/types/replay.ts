/** The declared types of src/replay: an approval's replay, its cases, and an agent's pinned conversations. */
import { builder } from "../builder.ts";
import { typePlan } from "../declared.ts";
import { enumOf } from "../common_types.ts";
import { ReplayCaseStatus, ReplayStatus, ReplayVerdict } from "../../replay/views.ts";

const effects = (what: string) => `${what}: { intents: [{ name, fields }], transfer: summary | null }.`;

/** One conversation of a replay, answered again as the agent is and as proposed. */
export const ApprovalReplayCase = builder.prismaObject("ApprovalReplayCase", {
  extensions: typePlan({ label: "Replay case" }),
  description: "A conversation cut before its latest AI reply and answered again twice, with the same " +
    "history, intents and media text: as the agent is (current) and as the approval proposes it.",
  fields: (t) => ({
    conversationId: t.exposeID("conversationId"),
    pinned: t.exposeBoolean("pinned", { description: "Pinned for the agent, rather than among its latest." }),
    status: t.expose("status", { type: enumOf(ReplayCaseStatus) }),
    customerMessages: t.exposeStringList("customerMessages", {
      description: "The customer's messages the stored reply answered, oldest first, as the model read them.",
    }),
    storedReply: t.exposeString("storedReply", { description: "The reply the customer got." }),
    storedEffects: t.expose("storedEffects", {
      type: "JSON",
      description: effects("What the stored reply did"),
    }),
    currentReply: t.exposeString("currentReply", {
      nullable: true,
      description: "The answer of the agent as it is, its tags removed.",
    }),
    proposedReply: t.exposeString("proposedReply", {
      nullable: true,
      description: "The answer of the agent as proposed, its tags removed.",
    }),
    currentEffects: t.expose("currentEffects", {
      type: "JSON",
      nullable: true,
      description: effects("What the current answer would do (nothing is carried out)"),
    }),
    proposedEffects: t.expose("proposedEffects", {
      type: "JSON",
      nullable: true,
      description: effects("What the proposed answer would do (nothing is carried out)"),
    }),
    verdict: t.expose("verdict", { type: enumOf(ReplayVerdict), nullable: true }),
    reason: t.exposeString("reason", { nullable: true, description: "Why, in one line." }),
    error: t.exposeString("error", { nullable: true, description: "Why the case failed." }),
  }),
});

/** An approval's replay: its state, counts, credits and cases. */
export const ApprovalReplay = builder.prismaObject("ApprovalReplay", {
  extensions: typePlan({ label: "Replay" }),
  description: "The agent's recent conversations answered again as the agent is and as the approval " +
    "proposes it, each with a verdict; counts grow as cases end.",
  fields: (t) => ({
    status: t.expose("status", { type: enumOf(ReplayStatus) }),
    total: t.exposeInt("total", { description: "Cases of its latest run." }),
    done: t.exposeInt("done", { description: "Cases ended (judged or failed)." }),
    same: t.exposeInt("same"),
    changed: t.exposeInt("changed"),
    regressed: t.exposeInt("regressed"),
    failed: t.exposeInt("failed", { description: "Cases whose model calls failed." }),
    credits: t.exposeFloat("credits", {
      description: "What its model calls cost at the supervisor's prices, every run included.",
    }),
    error: t.exposeString("error", { nullable: true, description: "Why it stopped or failed." }),
    startedAt: t.expose("startedAt", { type: "DateTime", nullable: true }),
    finishedAt: t.expose("finishedAt", { type: "DateTime", nullable: true }),
    cases: t.relation("cases", { query: { orderBy: [{ position: "asc" }] } }),
  }),
});

/** A conversation an agent's replays always include. */
export const ReplayPin = builder.prismaObject("ReplayPin", {
  extensions: typePlan({ label: "Pinned conversation" }),
  description: "A conversation pinned for the agent: every replay of a change of the agent includes it.",
  fields: (t) => ({
    agentId: t.exposeID("agentId"),
    conversationId: t.exposeID("conversationId"),
    pinnedBy: t.exposeID("pinnedById", { nullable: true, description: "The user who pinned it." }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});
