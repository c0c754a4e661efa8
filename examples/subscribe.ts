/**
 * A small graphql-ws client: prints every event of one agent's conversations as it happens.
 *
 * Run: deno run -A examples/subscribe.ts <token> <workspaceId> <agentId> [ws://127.0.0.1:8080/graphql]
 */
import { createClient } from "graphql-ws";

const [token, workspaceId, agentId, url = "ws://127.0.0.1:8080/graphql"] = Deno.args;
if (!token || !workspaceId || !agentId) {
  console.error("usage: subscribe.ts <token> <workspaceId> <agentId> [url]");
  Deno.exit(2);
}

const client = createClient({
  url,
  connectionParams: { authorization: `Bearer ${token}`, "x-workspace-id": workspaceId },
  on: {
    closed: (event) => console.error("closed", (event as CloseEvent).code, (event as CloseEvent).reason),
  },
});

const query = `subscription ($agentId: ID!) {
  conversationEvents(agentId: $agentId) {
    type
    conversation { id status transferSummary }
    message { sender type content status }
  }
}`;

for await (const result of client.iterate({ query, variables: { agentId } })) {
  console.log(JSON.stringify(result.data ?? result));
}
