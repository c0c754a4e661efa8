/// <reference lib="dom" />
/**
 * Who is signed in: the user and their workspaces. The login token is never this page's: signing in
 * (`POST /console/session`) puts it in an httpOnly cookie the browser sends with the page's own
 * calls and no script can read, so a reload or a new tab stays signed in until "Log out" (`DELETE
 * /console/session`) or the session's expiry. Every call the cookie signs carries the CSRF header
 * (the server refuses it otherwise). The workspace the console acts in is no secret: it is kept in
 * localStorage, so it survives a reload too.
 */
import { stringifyDocument } from "@urql/core";
import { graphql, type ResultOf, type TadaDocumentNode } from "./schema.ts";

/** What a login (or an accepted invitation) answers. */
export const SessionFields = graphql(`
  fragment ConsoleSession on Session { token user { id email name } workspaces { id name role } }
`);

/** Sent with every call the session cookie signs: a header no other site can make a browser send. */
export const CSRF_HEADERS = { "x-switchboard-csrf": "1" } as const;

/** Where the workspace the console acts in is kept (GraphiQL reads it too: src/graphql/graphiql.ts). */
const WORKSPACE_KEY = "switchboard.workspace";

export type Membership = ResultOf<typeof SessionFields>["workspaces"][number];
export type Role = Membership["role"];

export interface Session {
  user: ResultOf<typeof SessionFields>["user"];
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

type Problem = { message: string; code?: string };

/** Calls the public GraphQL API without a workspace (memberships, invitations), with the session cookie. */
export async function plainGraphQL<Result, Variables>(
  document: TadaDocumentNode<Result, Variables>,
  variables: Variables,
): Promise<{ data?: Result; error?: Problem }> {
  const res = await fetch("/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", ...CSRF_HEADERS },
    body: JSON.stringify({ query: stringifyDocument(document), variables }),
  });
  const body = await res.json().catch(() => ({}));
  if (body.errors?.length) {
    return { error: { message: body.errors[0].message, code: body.errors[0].extensions?.code } };
  }
  if (!res.ok || !body.data) {
    return { error: { message: body.detail ?? `The server answered ${res.status}.` } };
  }
  return { data: body.data as Result };
}

/** The kept workspace when it is one of `workspaces`, else the first (null: none). */
function workspaceOf(workspaces: Membership[], wanted: string | null = storedWorkspace()): string | null {
  return workspaces.find((w) => w.id === wanted)?.id ?? workspaces[0]?.id ?? null;
}

function storedWorkspace(): string | null {
  try {
    return localStorage.getItem(WORKSPACE_KEY);
  } catch {
    return null; // storage blocked: the first workspace
  }
}

/** Keeps the workspace the console acts in for the next reload or tab. */
export function rememberWorkspace(id: string): void {
  try {
    localStorage.setItem(WORKSPACE_KEY, id);
  } catch {
    // Storage blocked: a reload starts in the first workspace.
  }
}

/** A session of `answer` acting in `workspaceId` (default: the kept one); null when it has no workspace. */
export function sessionOf(
  answer: Pick<Session, "user" | "workspaces">,
  workspaceId?: string,
): Session | null {
  const id = workspaceOf(answer.workspaces, workspaceId);
  if (!id) return null;
  rememberWorkspace(id);
  return { user: answer.user, workspaces: answer.workspaces, workspaceId: id };
}

/** `POST /console/session` with `init`: the answer, or the server's problem. */
async function openSession(
  init: RequestInit,
): Promise<{ data?: Pick<Session, "user" | "workspaces">; error?: Problem }> {
  const res = await fetch("/console/session", { method: "POST", ...init });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    return { error: { message: body.detail ?? `The server answered ${res.status}.`, code: body.code } };
  }
  return { data: body };
}

/** Signs in with email and password: the cookie is set, the page gets the user and workspaces. */
export const signIn = (email: string, password: string) =>
  openSession({
    headers: { "content-type": "application/json", ...CSRF_HEADERS },
    body: JSON.stringify({ email, password }),
  });

/** Moves a login token the page was given (an accepted invitation's) into the cookie, and forgets it. */
export const adoptToken = (token: string) =>
  openSession({ headers: { authorization: `Bearer ${token}`, ...CSRF_HEADERS } });

/** Logs out: the session is revoked and the cookie cleared. */
export async function signOut(): Promise<void> {
  await fetch("/console/session", { method: "DELETE", headers: CSRF_HEADERS }).catch(() => {});
}

const VIEWER = graphql(
  `query ConsoleViewer { viewer { user { id email name } workspaces { id name role } } }`,
);

/**
 * The session the cookie holds, if any (a reload, a new tab): null when there is none, it has ended,
 * or its user belongs to no workspace.
 */
export async function restoreSession(): Promise<Session | null> {
  const answer = await plainGraphQL(VIEWER, {}).catch(() => ({ data: undefined }));
  const user = answer.data?.viewer.user;
  if (!user) return null;
  return sessionOf({ user, workspaces: answer.data!.viewer.workspaces });
}
