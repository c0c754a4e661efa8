/**
 * `deno task bench [agents|webhooks|fairness|nested|inbound|subscriptions|supervisor|approvals|documents|media|recovery|templates|grouping|replay|inbox|states]`: every benchmark, or the
 * one named. Each starts its own throwaway PostgreSQL and writes its figures to bench/results/. Not part of the tests.
 */
import { runAgentsBench } from "./agents.ts";
import { runWebhooksBench } from "./webhooks.ts";
import { runFairnessBench } from "./fairness.ts";
import { runNestedBench } from "./nested.ts";
import { runInboundBench } from "./inbound.ts";
import { runSubscriptionsBench } from "./subscriptions.ts";
import { runSupervisorBench } from "./supervisor.ts";
import { runApprovalsBench } from "./approvals.ts";
import { runDocumentsBench } from "./documents.ts";
import { runMediaBench } from "./media.ts";
import { runRecoveryBench } from "./recovery.ts";
import { runTemplatesBench } from "./templates.ts";
import { runGroupingBench } from "./grouping.ts";
import { runReplayBench } from "./replay.ts";
import { runInboxBench } from "./inbox.ts";
import { runStatesBench } from "./states.ts";

const benches: Record<string, () => Promise<unknown>> = {
  agents: runAgentsBench,
  webhooks: runWebhooksBench,
  fairness: runFairnessBench,
  nested: runNestedBench,
  inbound: runInboundBench,
  subscriptions: runSubscriptionsBench,
  supervisor: runSupervisorBench,
  approvals: runApprovalsBench,
  documents: runDocumentsBench,
  media: runMediaBench,
  recovery: runRecoveryBench,
  templates: runTemplatesBench,
  grouping: runGroupingBench,
  replay: runReplayBench,
  inbox: runInboxBench,
  states: runStatesBench,
};
const only = Deno.args[0];
if (only && !(only in benches)) {
  console.error(`unknown benchmark "${only}"; one of: ${Object.keys(benches).join(", ")}`);
  Deno.exit(2);
}
for (const [name, run] of Object.entries(benches)) {
  if (!only || only === name) await run();
}
