/// <reference lib="dom" />
/**
 * Who is signed in: the login token, the user and their workspaces. The token lives in this
 * page's memory only (never localStorage, sessionStorage or a cookie), so a reload asks for the
 * password again and nothing another script could read is left behind in storage.
 */
import { stringifyDocument } from "@urql/core";
import { graphql, type ResultOf, type TadaDocumentNode } from "./schema.ts";

/** What a login (or an accepted invitation) answers. */
export const SessionFields = graphql(`
  fragment ConsoleSession on Session { token user { id email name } workspaces { id name role } }
`);

export type Membership = ResultOf<typeof SessionFields>["workspaces"][number];
export type Role = Membership["role"];

export interface Session extends ResultOf<typeof SessionFields> {
  /** The workspace the console acts in (sent as x-workspace-id). */
  workspaceId: string;
}

/** The membership the session acts in. */
export const currentMembership = (s: Session): Membership =>
  s.workspaces.find((w) => w.id === s.workspaceId) ?? s.workspaces[0];

/**
 * What the console offers to a role, from the role table of the API (which refuses anyway): a
 * VIEWER reads only, an AGENT attends conversations, an OWNER or MANAGER also edits agents and
 * works with the supervisor and approvals.
 */
export const can = {
  attend: (role: Role) => role !== "VIEWER",
  manage: (role: Role) => role === "OWNER" || role === "MANAGER",
};

/** Calls the public GraphQL API without a workspace (login, invitations, memberships). */
export async function plainGraphQL<Result, Variables>(
  document: TadaDocumentNode<Result, Variables>,
  variables: Variables,
  token?: string,
): Promise<{ data?: Result; error?: { message: string; code?: string } }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch("/graphql", {
    method: "POST",
    headers,
    body: JSON.stringify({ query: stringifyDocument(document), variables }),
  });
  const body = await res.json().catch(() => ({}));
  if (body.errors?.length) {
    return { error: { message: body.errors[0].message, code: body.errors[0].extensions?.code } };
  }
  if (!res.ok || !body.data) return { error: { message: `The server answered ${res.status}.` } };
  return { data: body.data as Result };
}
