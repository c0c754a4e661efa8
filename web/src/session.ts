/// <reference lib="dom" />
/**
 * Who is signed in: the login token, the user and their workspaces. The token lives in this
 * page's memory only (never localStorage, sessionStorage or a cookie), so a reload asks for the
 * password again and nothing another script could read is left behind in storage.
 */
export type Role = "OWNER" | "MANAGER" | "AGENT" | "VIEWER";

export interface Membership {
  id: string;
  name: string;
  role: Role;
}

export interface Session {
  token: string;
  user: { id: string; email: string; name: string };
  workspaces: Membership[];
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
export async function plainGraphQL<T>(
  query: string,
  variables: Record<string, unknown>,
  token?: string,
): Promise<{ data?: T; error?: { message: string; code?: string } }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch("/graphql", {
    method: "POST",
    headers,
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json().catch(() => ({}));
  if (body.errors?.length) {
    return { error: { message: body.errors[0].message, code: body.errors[0].extensions?.code } };
  }
  if (!res.ok || !body.data) return { error: { message: `The server answered ${res.status}.` } };
  return { data: body.data as T };
}

export const SESSION_FIELDS = "token user { id email name } workspaces { id name role }";
