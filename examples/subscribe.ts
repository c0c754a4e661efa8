/**
 * A small graphql-ws client printing live events as they happen: one agent's conversations
 * (`conversationEvents`), or, with `approvals` instead of an agent id, the workspace's approvals
 * (`approvalEvents`, OWNER and MANAGER).
 *
 * Run: deno run -A examples/subscribe.ts <token> <workspaceId> <agentId | approvals> [ws://127.0.0.1:8080/graphql]
 */
import { createClient } from "graphql-ws";

const [token, workspaceId, feed, url = "ws://127.0.0.1:8080/graphql"] = Deno.args;
if (!token || !workspaceId || !feed) {
  console.error("usage: subscribe.ts <token> <workspaceId> <agentId | approvals> [url]");
  Deno.exit(2);
}

const client = createClient({
  url,
  connectionParams: { authorization: `Bearer ${token}`, "x-workspace-id": workspaceId },
  on: {
    connected: () => console.error("connected to", url, "- waiting for events"),
    closed: (event) => console.error("closed", (event as CloseEvent).code, (event as CloseEvent).reason),
  },
});

const conversations = `subscription ($agentId: ID!) {
  conversationEvents(agentId: $agentId) {
    type
    conversation { id status transferSummary }
    message { sender type content status }
  }
}`;
const approvals = `subscription {
  approvalEvents {
    type
    approval { id tool status targetId before after rationale error }
  }
}`;

const request = feed === "approvals"
  ? { query: approvals }
  : { query: conversations, variables: { agentId: feed } };
for await (const result of client.iterate(request)) {
  console.log(JSON.stringify(result.data ?? result));
}
