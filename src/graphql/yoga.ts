// Placeholder until the Pothos schema lands.
import type { Deps } from "../context.ts";
export function createGraphQLHandler(_deps: Deps): (req: Request) => Promise<Response> {
  return () => Promise.resolve(new Response("not yet", { status: 501 }));
}
