/**
 * The catalogue of actions and the role table (which role may do what), in one place.
 * REST, GraphQL and jobs all reach it through the services (`authorize`) or `can`.
 */
import { forbidden } from "../shared/errors.ts";
import type { Actor, Role } from "./actor.ts";

export const ACTIONS = [
  "workspace:read", // see the workspace, its agents, intents, webhooks, conversations, messages
  "webhook:secrets", // see webhook header values and signing secrets unmasked
  "agent:write", // create / change / delete agents, prompts, intents, webhooks, channels
  "conversation:attend", // take over, reply in, release, close conversations; assign them to oneself
  "conversation:assign-others", // assign conversations to any member, or unassign anyone's
  "members:manage", // invites and API tokens
  "members:invite-owner", // invite someone as OWNER
  "members:manage-privileged", // change or remove OWNER and MANAGER members, or make someone one
  "supervisor:use", // the supervisor chat and its change list
  "usage:read", // what the workspace's messages cost (delivered messages by pricing category)
  "approval:decide", // approve or reject (a person is also required, see approvals)
  "workspace:delete",
  "billing:manage",
] as const;
export type Action = typeof ACTIONS[number];

const ALL: readonly Action[] = ACTIONS;
const ROLE_ACTIONS: Record<Role, ReadonlySet<Action>> = {
  OWNER: new Set(ALL),
  MANAGER: new Set(
    ALL.filter((a) =>
      !["members:invite-owner", "members:manage-privileged", "workspace:delete", "billing:manage"].includes(a)
    ),
  ),
  AGENT: new Set<Action>(["workspace:read", "conversation:attend"]),
  VIEWER: new Set<Action>(["workspace:read"]),
};

/** Whether the actor's role allows the action. */
export function can(actor: Pick<Actor, "role">, action: Action): boolean {
  return ROLE_ACTIONS[actor.role].has(action);
}

/** Throws 403 FORBIDDEN unless the actor's role allows the action. */
export function authorize(actor: Pick<Actor, "role">, action: Action): void {
  if (!can(actor, action)) throw forbidden(`Your role (${actor.role}) does not allow ${action}.`);
}
