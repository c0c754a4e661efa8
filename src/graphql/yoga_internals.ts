/**
 * Every part of graphql-yoga's inner workings this app relies on, in one place (./yoga.ts and the
 * read planner's plugin, reads/graphql.ts, call the functions below). They were read in
 * graphql-yoga YOGA_VERIFIED; tests/package_internals_test.ts fails when deno.lock holds another
 * version (read them again, then move the constant), and checks each against the installed package.
 *
 * - Which result processor answers a request (plugins/use-result-processor.js, with
 *   plugins/result-processor/accept.js): event-stream, multipart, then the regular JSON one
 *   (`application/graphql-response+json`, `application/json`), each tried against the Accept
 *   header's media types (those whose charset is not utf-8 left out; no header admits any type)
 *   from last to first, the last match winning. So the regular one answers whenever the header admits
 *   JSON at all, with the media type of the first entry that does, `application/json` when that
 *   entry admits both (jsonMediaTypeOf).
 * - What the regular processor (`processRegularResult`, exported) answers for a result without
 *   errors or `extensions.http`: status 200 and `Content-Type: <media type>; charset=utf-8`, the
 *   result serialized as the body (sendJsonBytes answers the same with bytes given beforehand).
 * - Its JSON body parser (plugins/request-parser/post-json.js) reads the request through `json()`
 *   alone (parseJsonWith).
 * - A result no processor takes (a subscription asked for over plain JSON) is answered 406 and
 *   dropped, its stream never closed (process-request.js processResult; closeUnanswered).
 *
 * - GraphiQL's page (@graphql-yoga/render-graphiql's renderGraphiQL, of the same version) starts
 *   GraphiQL with one call `YogaGraphiQL.renderYogaGraphiQL(root, options)` in an inline script
 *   (renderGraphiQLWith).
 *
 * The bytes themselves reach Yoga through its public `onResultProcess` hook and `setResultProcessor`.
 */
import { type GraphiQLOptions, type Plugin, processRegularResult } from "graphql-yoga";
import { renderGraphiQL } from "@graphql-yoga/render-graphiql";

/** The graphql-yoga version whose inner workings were read (deno.lock's must be the same). */
export const YOGA_VERIFIED = "5.24.1";

type OnResultProcess = NonNullable<Plugin["onResultProcess"]>;
type ResultProcessor = Parameters<Parameters<OnResultProcess>[0]["setResultProcessor"]>[0];
type OnRequestParse = NonNullable<Plugin["onRequestParse"]>;
type RequestParser = NonNullable<Parameters<OnRequestParse>[0]["requestParser"]>;

const JSON_TYPES = ["application/graphql-response+json", "application/json"] as const;

/** Yoga's match of a media type of the Accept header (may hold wildcards) with a processor's. */
function admits(accepted: string, type: string): boolean {
  const [pre, suf] = accepted.split("/");
  const [typePre, typeSuf] = type.split("/");
  return (pre === "*" || pre === typePre) && (suf === "*" || suf === typeSuf);
}

/**
 * The media type Yoga's regular JSON processor answers `request` with, or null when another
 * processor does (event-stream, multipart) or none.
 */
export function jsonMediaTypeOf(request: Request): string | null {
  const accepted = (request.headers.get("accept") || "*/*").replace(/\s/g, "").toLowerCase().split(",");
  for (const entry of accepted) {
    const [type, ...params] = entry.split(";");
    if ((params.find((p) => p.includes("charset=")) ?? "charset=utf-8") !== "charset=utf-8") continue;
    const admitted = JSON_TYPES.filter((json) => admits(type, json));
    if (admitted.length) return admitted[admitted.length - 1];
  }
  return null;
}

/** Results to answer with bytes, and those bytes (withJsonBytes). */
const bytesOf = new WeakMap<object, Uint8Array>();

/**
 * Has `result` answered with `bytes`, its JSON as UTF-8, wherever Yoga answers it with its regular
 * JSON processor (sendJsonBytes must be among the plugins); elsewhere it is serialized as usual.
 */
export function withJsonBytes<R extends object>(result: R, bytes: Uint8Array): R {
  bytesOf.set(result, bytes);
  return result;
}

/** A body as it is (a copy only were it shared memory, which Response does not take). */
const ownBytes = (bytes: Uint8Array): bytes is Uint8Array<ArrayBuffer> => bytes.buffer instanceof ArrayBuffer;

/** The regular processor, with a result's bytes as its body when it has some. */
const jsonBytesProcessor: ResultProcessor = (result, fetchAPI, mediaType) => {
  const bytes = bytesOf.get(result);
  if (!bytes) return processRegularResult(result, fetchAPI, mediaType);
  return new fetchAPI.Response(ownBytes(bytes) ? bytes : bytes.slice(), {
    status: 200,
    headers: { "Content-Type": `${mediaType}; charset=utf-8` },
  });
};

/**
 * An onResultProcess hook (after Yoga's own, as any plugin's is): a result given bytes by
 * withJsonBytes, which Yoga would answer with its regular JSON processor, is answered with them.
 */
export const sendJsonBytes: OnResultProcess = ({ request, result, resultProcessor, setResultProcessor }) => {
  if (resultProcessor !== processRegularResult || !bytesOf.has(result)) return;
  const mediaType = jsonMediaTypeOf(request);
  if (mediaType) setResultProcessor(jsonBytesProcessor, mediaType);
};

/**
 * An onResultProcess hook (after Yoga's own): a subscription's stream that no processor answers
 * (Yoga's 406) is closed, so its live subscription and credential are let go at once.
 */
export const closeUnanswered: OnResultProcess = ({ result, resultProcessor }) => {
  if (resultProcessor || !(Symbol.asyncIterator in result)) return;
  // The execution's stream is its own iterator (an async generator): return() ends it.
  void result[Symbol.asyncIterator]().return?.();
};

/** What Yoga's JSON body parser (`parser`) makes of a body that has been read already, as `text`. */
export function parseJsonWith(parser: RequestParser, text: string): ReturnType<RequestParser> {
  return parser({ json: () => Promise.resolve().then(() => JSON.parse(text)) } as Request);
}

/** The call that starts GraphiQL in renderGraphiQL's page. */
const GRAPHIQL_START = "YogaGraphiQL.renderYogaGraphiQL(";

/**
 * GraphiQL's page with `start`, the source of a function `(root, options) => void` run in the
 * page, called instead of GraphiQL's start with the same arguments (it may change the options, then
 * calls `YogaGraphiQL.renderYogaGraphiQL` itself). Throws when the page has no such call.
 */
export function renderGraphiQLWith(options: GraphiQLOptions, start: string): string {
  const page = renderGraphiQL(options);
  const at = page.indexOf(GRAPHIQL_START);
  if (at < 0 || page.indexOf(GRAPHIQL_START, at + 1) >= 0) {
    throw new Error("renderGraphiQL's page does not start GraphiQL with one renderYogaGraphiQL call");
  }
  return page.slice(0, at) + `(${start})(` + page.slice(at + GRAPHIQL_START.length);
}
