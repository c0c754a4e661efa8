/**
 * The OpenAPI 3.1 document of the REST API, generated from the capability declarations
 * (shared/capability.ts) and their views (shared/view.ts); nothing in it is written by hand but the
 * few routes that are not capabilities (NON_CAPABILITY_ROUTES). Served at GET /api/openapi.json.
 *
 * - paths: one operation per http binding, operationId = the capability's name, tagged by the
 *   resource its path names (`tagOf`);
 * - schemas: one per view (REST's default shape of a row), one per enum and JSON object type, the
 *   zod inputs and outputs through zod's own `z.toJSONSchema` (draft 2020-12, OpenAPI 3.1's dialect);
 * - errors: RFC 9457 problem+json (`Problem`), listed per operation from what its declaration says.
 */
import { z } from "zod";
import type {
  Capability,
  HttpMethod,
  OperationCapability,
  OperationOutput,
  ReadCapability,
  ReadFilter,
  RestFields,
} from "../shared/capability.ts";
import { isReadFilter } from "../shared/capability.ts";
import type { EnumType, FieldSpec, JsonObjectType, RelationSpec, Scalar, View } from "../shared/view.ts";
import { ERROR_CODES } from "../shared/error_codes.ts";
import { DEFAULT_PAGE, MAX_REST_PAGE } from "../shared/pagination.ts";
import { restAnswer, restRow } from "../reads/row_shape.ts";
import { viewOf } from "../reads/views.ts";

// deno-lint-ignore no-explicit-any
export type JsonSchema = Record<string, any>;

export interface OpenApiDocument {
  openapi: "3.1.0";
  info: { title: string; version: string; description?: string };
  servers?: { url: string }[];
  tags: { name: string }[];
  paths: Record<string, Record<string, JsonSchema>>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, JsonSchema>;
    parameters: Record<string, JsonSchema>;
    securitySchemes: Record<string, JsonSchema>;
  };
  security: Record<string, string[]>[];
}

export interface OpenApiOptions {
  /** info.version: the API's version. */
  version?: string;
  /** servers[0].url, e.g. PUBLIC_URL (paths in the document start with /api or /invite). */
  serverUrl?: string;
  /** The tag of an operation (default: the resource its path names, see `pathTag`). */
  tagOf?: (path: string, method: HttpMethod) => string;
  /** Routes that are not capabilities (default NON_CAPABILITY_ROUTES). */
  extraRoutes?: readonly ExtraRoute[];
}

/** A route served outside the capabilities, documented by hand in NON_CAPABILITY_ROUTES. */
export interface ExtraRoute {
  method: HttpMethod;
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** The 200 answer: a media type and its schema. */
  content: Record<string, { schema: JsonSchema }>;
  errors?: readonly string[];
  /**
   * Called with the API's credentials and `x-workspace-id` (default: no credentials); `orSigned`:
   * or without them, with the query's `expires` and `signature` (a signed link).
   */
  secured?: { action: string; orSigned?: boolean };
}

/** The query of a signed media link (src/media/links.ts). */
const SIGNED_LINK_QUERY = [
  { name: "expires", description: "A signed link's expiry (Unix seconds), as `mediaSignedUrl` gives it." },
  { name: "signature", description: "A signed link's signature, as `mediaSignedUrl` gives it." },
];

/** The routes of the app that are not capabilities: the health check and this document itself. */
export const NON_CAPABILITY_ROUTES: readonly ExtraRoute[] = [
  {
    method: "GET",
    path: "/healthz",
    operationId: "health",
    summary: "200 once the server accepts requests and the database answers (503 otherwise).",
    tag: "meta",
    content: {
      "application/json": {
        schema: { type: "object", properties: { status: { const: "ok" } }, required: ["status"] },
      },
    },
    errors: ["Unavailable"],
  },
  {
    method: "GET",
    path: "/api/openapi.json",
    operationId: "openApiDocument",
    summary: "This document.",
    tag: "meta",
    content: { "application/json": { schema: { type: "object" } } },
  },
  {
    method: "GET",
    path: "/webhooks/whatsapp/{channelId}",
    operationId: "whatsappVerify",
    summary:
      "Meta's verify handshake: `hub.mode=subscribe`, `hub.verify_token` (the channel's) and `hub.challenge`, echoed as text/plain; a wrong token answers 403.",
    tag: "whatsapp",
    content: { "text/plain": { schema: { type: "string" } } },
    errors: ["Forbidden", "NotFound"],
  },
  {
    method: "POST",
    path: "/webhooks/whatsapp/{channelId}",
    operationId: "whatsappInbound",
    summary:
      "Meta's messages webhook: `X-Hub-Signature-256` over the raw body with the channel's app secret (missing or wrong: 401, nothing stored); answered 200 at once, the messages and status callbacks are stored by a queued job.",
    tag: "whatsapp",
    content: { "application/json": { schema: {} } },
    errors: ["BadRequest", "Unauthorized", "NotFound"],
  },
  {
    method: "GET",
    path: "/api/messages/{messageId}/media",
    operationId: "messageMedia",
    summary:
      "The file of a media message (`media` of the Message), streamed from the WhatsApp Graph API on demand with its " +
      "mime type; any reader of the workspace, or anyone with the message's `mediaSignedUrl` (`expires` and " +
      "`signature`, no credentials; 401 once it has expired). Shown inline only for PNG, JPEG, GIF and WebP images, " +
      "audio and video; any other type is a download, always under `Content-Security-Policy: sandbox`. 404 " +
      "MEDIA_GONE when WhatsApp no longer has it, 502 MEDIA_UNAVAILABLE when the Graph API fails.",
    tag: "conversations",
    secured: { action: "workspace:read", orSigned: true },
    content: {
      "application/octet-stream": {
        schema: { type: "string", contentMediaType: "application/octet-stream" },
      },
    },
    errors: ["BadRequest", "Unauthorized", "Forbidden", "NotFound", "BadGateway"],
  },
  {
    method: "GET",
    path: "/api/docs",
    operationId: "apiReference",
    summary: "A reference page rendering this document (Swagger UI, served from this server).",
    tag: "meta",
    content: { "text/html": { schema: { type: "string" } } },
  },
];

const PROBLEM_RESPONSES: Record<string, { status: string; description: string }> = {
  BadRequest: {
    status: "400",
    description: "Malformed JSON, a validation failure (`errors` lists each field), a bad cursor or a " +
      "missing `x-workspace-id`.",
  },
  Unauthorized: { status: "401", description: "Missing, malformed, expired or revoked credentials." },
  Forbidden: {
    status: "403",
    description: "Not a member of the workspace, or the role may not do this.",
  },
  NotFound: {
    status: "404",
    description: "No such record in this workspace (an id of another workspace is not found either).",
  },
  Conflict: {
    status: "409",
    description: "A state conflict: a duplicate, a record in the wrong state, or a concurrent change.",
  },
  PayloadTooLarge: { status: "413", description: "The body is over 1 MiB." },
  UnsupportedMediaType: { status: "415", description: "The body is not `application/json`." },
  TooManyRequests: {
    status: "429",
    description: "Too many attempts; wait `Retry-After` seconds.",
  },
  BadGateway: { status: "502", description: "A service this call depends on failed; try again." },
  Unavailable: { status: "503", description: "The database does not answer." },
  Error: {
    status: "default",
    description: "Any other error (405 with `Allow`, 500 without internal detail), as problem+json.",
  },
};

/** The OpenAPI 3.1 document of `capabilities` (those with an http binding) and the extra routes. */
export function openApiDocument(
  capabilities: readonly Capability[],
  options: OpenApiOptions = {},
): OpenApiDocument {
  const gen = new Generator();
  const doc: OpenApiDocument = {
    openapi: "3.1.0",
    info: {
      title: "Switchboard REST API",
      version: options.version ?? "1.0.0",
      description: "Generated from the capability declarations. Errors are RFC 9457 problem details " +
        "(`application/problem+json`) with a stable `code`. Authenticate with `Authorization: Bearer` " +
        "and a login JWT or an API token; paths outside /api/workspaces/{workspaceId} name the acting " +
        "workspace in `x-workspace-id`.",
    },
    ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
    tags: [],
    paths: {},
    components: {
      schemas: gen.schemas,
      responses: problemResponses(),
      parameters: {
        WorkspaceId: {
          name: "x-workspace-id",
          in: "header",
          required: true,
          description: "The acting workspace (400 WORKSPACE_REQUIRED when missing, 403 when not a member).",
          schema: { type: "string" },
        },
        Limit: {
          name: "limit",
          in: "query",
          description: "Page size.",
          schema: { type: "integer", minimum: 1, maximum: MAX_REST_PAGE, default: DEFAULT_PAGE },
        },
        Cursor: {
          name: "cursor",
          in: "query",
          description: "The `nextCursor` of the previous page (opaque; 400 BAD_CURSOR when not one of ours).",
          schema: { type: "string" },
        },
      },
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "A login JWT (POST /api/auth/login) or a workspace API token.",
        },
      },
    },
    security: [{ bearer: [] }],
  };
  gen.schemas.Problem = problemSchema();

  const collections = collectionSegments(capabilities);
  const tagOf = options.tagOf ?? ((path: string) => pathTag(path, collections));
  const tags = new Set<string>();
  const add = (method: HttpMethod, path: string, operation: JsonSchema) => {
    const item = (doc.paths[path] ??= {});
    const key = method.toLowerCase();
    if (item[key]) throw new Error(`OpenAPI: ${method} ${path} is declared twice`);
    item[key] = operation;
    for (const tag of operation.tags ?? []) tags.add(tag);
  };

  for (const cap of capabilities) {
    if (!cap.http) continue;
    const method: HttpMethod = cap.kind === "read" ? "GET" : cap.http.method;
    const operation = cap.kind === "read"
      ? gen.readOperation(cap, cap.http.path)
      : gen.operation(cap, method, cap.http.path);
    add(method, cap.http.path, { ...operation, tags: [tagOf(cap.http.path, method)] });
  }
  for (const route of options.extraRoutes ?? NON_CAPABILITY_ROUTES) {
    add(route.method, route.path, {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      ...(route.secured
        ? {
          description: `Requires \`${route.secured.action}\`.`,
          parameters: [
            ...pathParams(route.path).map((name) => ({
              name,
              in: "path",
              required: true,
              schema: { type: "string" },
            })),
            ref("WorkspaceId", "parameters"),
            ...(route.secured.orSigned
              ? SIGNED_LINK_QUERY.map((q) => ({
                ...q,
                in: "query",
                required: false,
                schema: { type: "string" },
              }))
              : []),
          ],
          ...(route.secured.orSigned ? { security: [{ bearer: [] }, {}] } : {}),
        }
        : { security: [] }),
      responses: {
        "200": { description: "OK", content: route.content },
        ...Object.fromEntries(
          (route.errors ?? []).map((r) => [PROBLEM_RESPONSES[r].status, ref(r, "responses")]),
        ),
        default: ref("Error", "responses"),
      },
    });
  }
  doc.tags = [...tags].sort().map((name) => ({ name }));
  return doc;
}

/**
 * The resource a path names, for grouping: the first segment under /api, or, for a path nested
 * under one record (`/api/agents/{agentId}/intents/...`), the nested collection when it is one
 * (`collections`: segments followed by an id somewhere, or ending a GET path).
 */
export function pathTag(path: string, collections: ReadonlySet<string>): string {
  const segments = path.split("/").filter(Boolean);
  const start = segments[0] === "api" ? 1 : 0;
  const [top, param, nested] = segments.slice(start);
  if (param?.startsWith("{") && nested && collections.has(nested)) return nested;
  return top ?? "api";
}

function collectionSegments(capabilities: readonly Capability[]): Set<string> {
  const out = new Set<string>();
  for (const cap of capabilities) {
    if (!cap.http) continue;
    const segments = cap.http.path.split("/").filter(Boolean);
    segments.forEach((s, i) => {
      if (segments[i + 1]?.startsWith("{")) out.add(s);
    });
    const method = cap.kind === "read" ? "GET" : cap.http.method;
    const last = segments[segments.length - 1];
    if (method === "GET" && last && !last.startsWith("{")) out.add(last);
  }
  return out;
}

/** Builds operations and fills `schemas` with the component schemas they refer to. */
class Generator {
  readonly schemas: Record<string, JsonSchema> = {};
  /** What each schema name was registered for, so that two different things of one name are caught. */
  private readonly owners = new Map<string, unknown>();

  readOperation(cap: ReadCapability, path: string): JsonSchema {
    const { view, answer } = restAnswer(cap);
    const row = cap.rest?.fields
      ? this.register(`${pascal(cap.name)}Item`, cap, () => this.viewSchema(view, cap.rest!.fields))
      : this.viewRef(view);
    const paged = answer === "page";
    const body = answer === "one" ? row : listSchema(row, paged);
    const hasIds = pathParams(path).some((p) => p !== "workspaceId") || answer === "one";
    return {
      operationId: cap.name,
      summary: cap.summary,
      description: `Requires \`${cap.action}\`.`,
      parameters: [
        ...this.pathParameters(path, cap.params),
        ...(workspaceHeader(path, true) ? [ref("WorkspaceId", "parameters")] : []),
        ...(paged ? [ref("Limit", "parameters"), ref("Cursor", "parameters")] : []),
        ...Object.entries(cap.filters ?? {}).map(([name, filter]) => ({
          name,
          in: "query",
          required: false,
          description: isReadFilter(filter)
            ? filter.description
            : `Only rows whose \`${name}\` is this value.`,
          schema: isReadFilter(filter) ? this.filterSchema(filter) : this.fieldSchema(view.fields[name]),
        })),
      ],
      responses: {
        "200": { description: "OK", content: { "application/json": { schema: body } } },
        ...errorResponses({
          badRequest: paged || workspaceHeader(path, true),
          authenticated: true,
          workspace: true,
          ids: hasIds,
          body: false,
          write: false,
          public: false,
        }),
      },
    };
  }

  operation(cap: OperationCapability, method: HttpMethod, path: string): JsonSchema {
    const workspace = cap.access.kind === "workspace";
    const hasBody = cap.input !== undefined && method !== "GET";
    const status = String(cap.http?.status ?? ("none" in cap.output ? 204 : 200));
    const operation: JsonSchema = {
      operationId: cap.name,
      summary: cap.summary,
      ...(cap.access.kind === "workspace" ? { description: `Requires \`${cap.access.action}\`.` } : {}),
      ...(cap.access.kind === "public" ? { security: [] } : {}),
      parameters: [
        ...this.pathParameters(path, cap.params),
        ...(workspaceHeader(path, workspace) ? [ref("WorkspaceId", "parameters")] : []),
        // A GET has no body: its input is its query string.
        ...(cap.input && method === "GET" ? this.queryParameters(cap.input, pascal(cap.name)) : []),
      ],
    };
    if (hasBody) {
      operation.requestBody = {
        required: !accepts(cap.input!, undefined),
        content: {
          "application/json": { schema: this.zodSchema(cap.input!, "input", `${pascal(cap.name)}Input`) },
        },
      };
    }
    operation.responses = {
      [status]: status === "204" ? { description: "No content" } : {
        description: STATUS_TEXT[status] ?? "OK",
        content: { "application/json": { schema: this.outputSchema(cap.output, pascal(cap.name)) } },
      },
      ...errorResponses({
        badRequest: cap.input !== undefined || workspaceHeader(path, workspace),
        authenticated: cap.access.kind !== "public",
        workspace,
        ids: pathParams(path).some((p) => p !== "workspaceId") || Object.keys(cap.params).length > 0,
        body: hasBody,
        write: method !== "GET" && !cap.query,
        public: cap.access.kind === "public",
      }),
    };
    return operation;
  }

  private outputSchema(output: OperationOutput, name: string): JsonSchema {
    if ("none" in output) return {};
    if ("schema" in output) {
      const schema = this.zodSchema(output.schema, "output", output.typeName ?? `${name}Output`);
      // A list answers { data: [...] }, never a bare array (src/rest/derive.ts).
      if (schema.type === "array") {
        return { type: "object", properties: { data: schema }, required: ["data"] };
      }
      // A named value (the GraphQL type's name) is a component under that name, as in the GraphQL schema.
      if (!output.typeName || schema.$ref) return schema;
      return this.register(output.typeName, JSON.stringify(schema), () => schema);
    }
    const view = viewOf(output.view);
    if (!output.extra) return this.viewRef(view);
    // The row with the extra fields beside it, as one object (strict readers see every property).
    const row = this.viewSchema(view);
    const extra = this.zodSchema(output.extra, "output", `${name}Extra`);
    return {
      type: "object",
      properties: { ...row.properties, ...extra.properties },
      required: [...new Set([...row.required, ...(extra.required ?? [])])],
    };
  }

  private pathParameters(path: string, labels: Readonly<Record<string, string>>): JsonSchema[] {
    return pathParams(path).map((name) => ({
      name,
      in: "path",
      required: true,
      description: name === "workspaceId"
        ? "The acting workspace."
        : labels[name]
        ? `The ${labels[name].toLowerCase()}'s id.`
        : undefined,
      schema: { type: "string" },
    })).map(dropUndefined);
  }

  private queryParameters(input: z.ZodType, name: string): JsonSchema[] {
    const schema = this.zodSchema(input, "input", `${name}Query`);
    const required = new Set<string>(schema.required ?? []);
    return Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>).map(([field, s]) => ({
      name: field,
      in: "query",
      required: required.has(field),
      schema: s,
    }));
  }

  /**
   * A zod schema as JSON Schema 2020-12; what JSON Schema cannot say (transforms, refinements, dates)
   * becomes `{}` or is left out rather than failing. Named parts (`.meta({ id })`) and recursive ones
   * become component schemas; zod's generated names and a root that refers to itself get `name`.
   */
  zodSchema(schema: z.ZodType, io: "input" | "output", name: string): JsonSchema {
    const { $schema: _, $defs = {}, ...root } = z.toJSONSchema(schema, {
      io,
      target: "draft-2020-12",
      unrepresentable: "any",
      reused: "inline",
      cycles: "ref",
    }) as JsonSchema;
    const targets = new Map<string, string>();
    let n = 0;
    for (const key of Object.keys($defs)) {
      targets.set(`#/$defs/${key}`, key.startsWith("__") ? `${name}${++n}` : key);
    }
    const selfRef = JSON.stringify(root).includes('"$ref":"#"') ||
      JSON.stringify($defs).includes('"$ref":"#"');
    if (selfRef) targets.set("#", name);
    const rewrite = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(rewrite);
      if (!v || typeof v !== "object") return v;
      return Object.fromEntries(
        Object.entries(v).map(([k, x]) => {
          const target = k === "$ref" ? targets.get(x as string) : undefined;
          return [k, target ? `#/components/schemas/${target}` : rewrite(x)];
        }),
      );
    };
    for (const [key, def] of Object.entries($defs as Record<string, JsonSchema>)) {
      const target = targets.get(`#/$defs/${key}`)!;
      this.register(target, JSON.stringify(def), () => rewrite(def) as JsonSchema);
    }
    const out = rewrite(root) as JsonSchema;
    return selfRef ? this.register(name, JSON.stringify(root), () => out) : out;
  }

  /** `$ref` to the view's schema: REST's default shape of its rows. */
  private viewRef(view: View): JsonSchema {
    return this.register(view.name, view, () => this.viewSchema(view));
  }

  /** A row of `view` as REST shows it (reads/row_shape.ts). */
  viewSchema(view: View, fields?: RestFields): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    for (const entry of restRow(view, fields)) {
      properties[entry.key] = "field" in entry
        ? this.fieldSchema(entry.field)
        : this.relationSchema(entry.relation);
    }
    return {
      type: "object",
      ...(view.description ? { description: view.description } : {}),
      properties,
      required: Object.keys(properties),
    };
  }

  private relationSchema(relation: RelationSpec): JsonSchema {
    const row = this.viewRef(relation.view());
    const described = (
      s: JsonSchema,
    ) => (relation.description ? { ...s, description: relation.description } : s);
    switch (relation.kind) {
      case "object":
        return described(relation.nullable ? { anyOf: [row, { type: "null" }] } : row);
      case "embedded":
        return described(row);
      case "list":
        return described({ type: "array", items: row });
      case "connection":
        return described(listSchema(row, true));
    }
  }

  /** A filter of its own: text (an enum's values are read liberally, see its description). */
  private filterSchema(filter: ReadFilter): JsonSchema {
    return filter.type === "ID" ? SCALARS.ID : SCALARS.String;
  }

  private fieldSchema(field: FieldSpec): JsonSchema {
    let s = this.typeSchema(field.type);
    if (field.list) s = { type: "array", items: s };
    if (field.nullable) s = nullable(s);
    return field.description ? { ...s, description: field.description } : s;
  }

  private typeSchema(type: Scalar | EnumType | JsonObjectType): JsonSchema {
    if (typeof type === "string") return SCALARS[type];
    if ("values" in type) {
      return this.register(type.name, type, () => ({
        type: "string",
        enum: [...type.values],
        ...(type.description ? { description: type.description } : {}),
      }));
    }
    return this.register(type.name, type, () => {
      const properties = Object.fromEntries(
        Object.entries(type.fields).map(([k, f]) => {
          const s = f.nullable ? nullable(SCALARS[f.type]) : SCALARS[f.type];
          return [k, f.description ? { ...s, description: f.description } : s];
        }),
      );
      return {
        type: "object",
        ...(type.description ? { description: type.description } : {}),
        properties,
        required: Object.keys(properties),
      };
    });
  }

  /**
   * Registers a component schema once per owner and answers a `$ref` to it. A zod schema's `id`
   * (owner: its JSON text) that names a view or enum (owner: the declaration) is that type: the
   * declaration's schema wins. Two different declarations, or two different zod schemas, under one
   * name are an error.
   */
  private register(name: string, owner: unknown, build: () => JsonSchema): JsonSchema {
    const known = this.owners.get(name);
    const fromZod = (o: unknown) => typeof o === "string";
    if (known === undefined || (fromZod(known) && !fromZod(owner))) {
      this.owners.set(name, owner);
      this.schemas[name] = {}; // reserved first: a view may refer to itself through a relation
      this.schemas[name] = build();
    } else if (known !== owner && !(fromZod(owner) && !fromZod(known))) {
      throw new Error(`OpenAPI: two different schemas are named ${name}`);
    }
    return ref(name, "schemas");
  }
}

const STATUS_TEXT: Record<string, string> = { "200": "OK", "201": "Created", "202": "Accepted" };

const SCALARS: Record<Scalar, JsonSchema> = {
  ID: { type: "string" },
  String: { type: "string" },
  Int: { type: "integer" },
  Float: { type: "number" },
  Boolean: { type: "boolean" },
  DateTime: { type: "string", format: "date-time" },
  JSON: {},
};

/** REST's list answer: `{data}`, with `nextCursor` when paged. */
function listSchema(row: JsonSchema, paged: boolean): JsonSchema {
  return paged
    ? {
      type: "object",
      properties: {
        data: { type: "array", items: row },
        nextCursor: {
          type: ["string", "null"],
          description: "Pass as `cursor` for the next page; null on the last page.",
        },
      },
      required: ["data", "nextCursor"],
    }
    : { type: "object", properties: { data: { type: "array", items: row } }, required: ["data"] };
}

function nullable(s: JsonSchema): JsonSchema {
  if (Object.keys(s).length === 0) return s; // JSON: null is already a value
  if (typeof s.type === "string" && !s.$ref) return { ...s, type: [s.type, "null"] };
  return { anyOf: [s, { type: "null" }] };
}

/** `{name}` parameters of a path, in order. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
}

/** Workspace-scoped and not naming the workspace in its path: the acting workspace is x-workspace-id. */
function workspaceHeader(path: string, workspace: boolean): boolean {
  return workspace && !pathParams(path).includes("workspaceId");
}

function errorResponses(o: {
  badRequest: boolean;
  authenticated: boolean;
  workspace: boolean;
  ids: boolean;
  body: boolean;
  write: boolean;
  public: boolean;
}): Record<string, JsonSchema> {
  const names = [
    o.badRequest || o.body ? "BadRequest" : null,
    o.authenticated ? "Unauthorized" : null,
    o.workspace ? "Forbidden" : null,
    o.ids ? "NotFound" : null,
    // Every write runs in a transaction that can meet a concurrent one (CONCURRENT_CHANGE at least).
    o.write ? "Conflict" : null,
    o.body ? "PayloadTooLarge" : null,
    o.body ? "UnsupportedMediaType" : null,
    // The abuse limits guard the credential-taking public writes (login, invite acceptance).
    o.public && o.write ? "TooManyRequests" : null,
    "Error",
  ].filter((n): n is string => n !== null);
  return Object.fromEntries(names.map((n) => [PROBLEM_RESPONSES[n].status, ref(n, "responses")]));
}

function problemResponses(): Record<string, JsonSchema> {
  return Object.fromEntries(
    Object.entries(PROBLEM_RESPONSES).map(([name, { description }]) => [
      name,
      {
        description,
        content: { "application/problem+json": { schema: ref("Problem", "schemas") } },
      },
    ]),
  );
}

/** RFC 9457 problem details as rest/errors.ts writes them. */
function problemSchema(): JsonSchema {
  return {
    type: "object",
    description: "RFC 9457 problem details.",
    properties: {
      type: { type: "string", description: "`/problems/<code in kebab case>`." },
      title: { type: "string" },
      status: { type: "integer" },
      detail: { type: "string" },
      instance: { type: "string", description: "The request id (also the `x-request-id` header)." },
      code: {
        type: "string",
        enum: Object.keys(ERROR_CODES),
        description: "Stable; see the README's error codes.",
      },
      errors: {
        type: "array",
        description: "Field problems of a validation failure.",
        items: {
          type: "object",
          properties: { path: { type: "string" }, message: { type: "string" } },
          required: ["path", "message"],
        },
      },
    },
    required: ["type", "title", "status", "detail", "code"],
  };
}

function ref(name: string, kind: "schemas" | "responses" | "parameters"): JsonSchema {
  return { $ref: `#/components/${kind}/${name}` };
}

/** Does the input schema accept `value` (an absent body)? Refinements that throw count as no. */
function accepts(schema: z.ZodType, value: unknown): boolean {
  try {
    return schema.safeParse(value).success;
  } catch {
    return false;
  }
}

function pascal(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

function dropUndefined(o: JsonSchema): JsonSchema {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
