/** Who is calling: resolved once per request (HTTP, WebSocket, REST alike) by authenticate.ts. */
export type Role = "OWNER" | "MANAGER" | "AGENT" | "VIEWER";

/** The bearer credential before a workspace is chosen. */
export type Principal =
  /** A login JWT; `sessionId` is its `jti` (src/auth/sessions.ts). */
  | { kind: "user"; userId: string; sessionId: string }
  | { kind: "token"; tokenId: string; workspaceId: string; label: string };

/** A principal acting in one workspace with the role it holds there. */
export interface Actor {
  kind: "user" | "token";
  /** Set for users; null for API tokens. */
  userId: string | null;
  tokenId: string | null;
  workspaceId: string;
  role: Role;
  /** Human-readable author for audit fields (user email or "API token <label>"). */
  label: string;
}
