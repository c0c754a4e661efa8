/**
 * Every stable error code the API answers, REST `code` and GraphQL `extensions.code` alike: its
 * HTTP status (REST status, GraphQL `extensions.status`) and what it means. AppError, problem() and
 * the GraphQL error builders take an ErrorCode, so an undeclared code fails the type check; the
 * README's "Error codes" table is checked against this list (tests/error_codes_test.ts).
 */
export const ERROR_CODES = {
  // The request itself
  VALIDATION_FAILED: {
    status: 400,
    meaning: "The input does not fit its schema; `errors` lists `{ path, message }` per field.",
  },
  MALFORMED_JSON: { status: 400, meaning: "The body is not valid JSON." },
  MALFORMED_BODY: {
    status: 400,
    meaning: "The body could not be read (broken transfer encoding or cut short).",
  },
  INVALID_UTF8: { status: 400, meaning: "The body is not valid UTF-8 (REST and GraphQL)." },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, meaning: "A REST body that is not `application/json`." },
  PAYLOAD_TOO_LARGE: { status: 413, meaning: "The body is over 1 MiB (REST and GraphQL)." },
  WORKSPACE_REQUIRED: {
    status: 400,
    meaning: "A workspace-scoped call without the `x-workspace-id` header.",
  },
  BAD_CURSOR: {
    status: 400,
    meaning: "A pagination cursor this API did not give out (REST `cursor`, GraphQL `after`/`before`).",
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    meaning: "A known REST path asked with another method; `Allow` lists its methods.",
  },
  // Who is asking
  UNAUTHENTICATED: {
    status: 401,
    meaning: "Missing, invalid or expired credentials (REST adds `WWW-Authenticate: Bearer`).",
  },
  INVALID_CREDENTIALS: {
    status: 401,
    meaning:
      "Wrong email or password at login, or wrong password of the existing account on invite acceptance.",
  },
  INVALID_CURRENT_PASSWORD: { status: 400, meaning: "A password change with a wrong current password." },
  FORBIDDEN: { status: 403, meaning: "The caller's role may not do this." },
  CSRF_REFUSED: {
    status: 403,
    meaning:
      "A request signed in by the console's session cookie from another origin or site (`Origin`, `Sec-Fetch-Site`), or a write without the `x-switchboard-csrf` header; nothing ran.",
  },
  RATE_LIMITED: {
    status: 429,
    meaning:
      "Too many login or invite attempts; wait `Retry-After` (GraphQL `extensions.retryAfter`) seconds.",
  },
  LIVE_LIMIT_REACHED: {
    status: 429,
    meaning:
      "graphql-ws: too many subscriptions on one socket (an `error` message), or too many sockets from one client address (HTTP 429 at the upgrade).",
  },
  // The data
  NOT_FOUND: {
    status: 404,
    meaning: "No such record in this workspace (also one deleted by a concurrent request), or no such route.",
  },
  DUPLICATE: {
    status: 409,
    meaning: "A unique value is taken (a user's email, or a concurrent insert of the same values).",
  },
  DUPLICATE_INTENT: { status: 409, meaning: "The agent already has an intent with this tag." },
  INVITE_USED: { status: 409, meaning: "The invite has already been accepted." },
  INVITE_EXPIRED: { status: 409, meaning: "The invite has expired." },
  LAST_OWNER: { status: 409, meaning: "The change would leave the workspace without an OWNER." },
  DELIVERY_NOT_FAILED: { status: 409, meaning: "Only a FAILED delivery can be redelivered." },
  NO_BUSINESS_ACCOUNT: {
    status: 409,
    meaning:
      "A template sync of a channel without `config.businessAccountId` (its WhatsApp Business Account id).",
  },
  CONVERSATION_CLOSED: {
    status: 409,
    meaning: "The conversation is CLOSED; a new customer message opens a new one.",
  },
  WINDOW_CLOSED: {
    status: 409,
    meaning: "WhatsApp's 24-hour customer service window is closed (the customer's latest message is " +
      "older, or Meta refused a message with 131047): a free-form message cannot reach the customer.",
  },
  NOT_WHATSAPP: {
    status: 409,
    meaning: "Templates are WhatsApp's: the conversation or channel is an API channel, which has none.",
  },
  CONVERSATION_NOT_HUMAN: {
    status: 409,
    meaning: "A human reply or a release needs a conversation in HUMAN state (take it over first).",
  },
  APPROVAL_NOT_PENDING: {
    status: 409,
    meaning:
      "Approve, reject or replay of an approval that is no longer PENDING (decided, expired or failed).",
  },
  REPLAY_UNAVAILABLE: {
    status: 409,
    meaning:
      "`POST /api/approvals/{approvalId}/replay` of an approval whose change has no replay (it does not change what the agent says), or with replay off (`REPLAY_CONVERSATIONS=0`).",
  },
  STALE_APPROVAL: {
    status: 409,
    meaning:
      "The approval's target changed (or is gone) since the proposal; it stays PENDING, reject it and propose again.",
  },
  CONCURRENT_CHANGE: {
    status: 409,
    meaning: "A concurrent request got in the way (deadlock); nothing was changed, send it again.",
  },
  TEMPLATE_NOT_APPROVED: {
    status: 422,
    meaning:
      "The channel has no APPROVED template of this name and language (unknown, or PENDING, REJECTED, PAUSED...); nothing was sent.",
  },
  TEMPLATE_PARAMETERS: {
    status: 422,
    meaning:
      "The parameters do not match the template's components in number, names or kinds; `errors` lists `{ path, message }` per problem, nothing was sent.",
  },
  // GraphQL requests refused before execution (HTTP 400)
  GRAPHQL_PARSE_FAILED: { status: 400, meaning: "GraphQL: the document does not parse." },
  GRAPHQL_VALIDATION_FAILED: {
    status: 400,
    meaning: "GraphQL: the document does not validate against the schema.",
  },
  OPERATION_RESOLUTION_FAILURE: {
    status: 400,
    meaning: "GraphQL: the operation to run cannot be chosen (unknown or missing `operationName`).",
  },
  BAD_USER_INPUT: {
    status: 400,
    meaning: "GraphQL: variables that do not fit their types, or another mistake outside any resolver.",
  },
  BAD_REQUEST: {
    status: 400,
    meaning:
      "GraphQL (from Yoga): not a GraphQL request (no `query`, unknown parameter, batch); 405 for a mutation over GET or a method other than GET/POST.",
  },
  QUERY_TOO_COMPLEX: {
    status: 400,
    meaning: "GraphQL: the document is over a limit (tokens, depth, aliases, fields, page size, cost).",
  },
  RESPONSE_TOO_LARGE: {
    status: 400,
    meaning:
      "A read whose answer would be over the byte limit of one request (READ_MAX_RESPONSE_BYTES); ask for fewer rows or fields (REST and GraphQL).",
  },
  INTROSPECTION_DISABLED: { status: 400, meaning: "GraphQL: `__schema` / `__type` in production." },
  // The server
  CLIENT_GONE: {
    status: 499,
    meaning: "GraphQL: work stopped because the client went away (nobody receives it).",
  },
  SUPERVISOR_MODEL_UNAVAILABLE: {
    status: 503,
    meaning: "The supervisor has no language model configured (`OPENAI_API_KEY`); the message was stored.",
  },
  MEDIA_GONE: {
    status: 404,
    meaning:
      "`GET /api/messages/{messageId}/media`: WhatsApp no longer has the file (media expire after some weeks).",
  },
  MEDIA_UNAVAILABLE: {
    status: 502,
    meaning: "`GET /api/messages/{messageId}/media`: the WhatsApp Graph API failed or timed out; try again.",
  },
  TEMPLATE_SYNC_FAILED: {
    status: 502,
    meaning: "A template sync that the WhatsApp Graph API failed (its reason in `detail`); nothing changed.",
  },
  SUPERVISOR_MODEL_ERROR: {
    status: 502,
    meaning: "The supervisor's language model failed or timed out; the message was stored, send it again.",
  },
  UNAVAILABLE: {
    status: 503,
    meaning: "`GET /healthz`: the database does not answer; `GET /`: the console has not been built.",
  },
  INTERNAL: { status: 500, meaning: "A bug on our side (logged); the answer says no more." },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The status the table gives `C`: AppError's constructor checks it against the code. */
export type StatusOf<C extends ErrorCode> = (typeof ERROR_CODES)[C]["status"];

/** The codes whose status is 409, the ones `conflict()` takes. */
export type ConflictCode = { [C in ErrorCode]: StatusOf<C> extends 409 ? C : never }[ErrorCode];
