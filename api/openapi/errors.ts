/** The error answers every operation of /openapi.json shares: what each code and status means, the envelope narrowed to a response's codes. */
import { acceptedValues, type QueryParameter } from '../../core/declared-query.ts';
import { MAX_QUERY_CHARS, QUERY_PARAMETER_SPECS } from '../../core/query-params.ts';
import { DIVERGENCES } from '../routes/divergences.ts';
import { TENSIONS } from '../routes/tensions.ts';
import { ERROR_CODES, type ErrorCode } from '../../schemas/errors.ts';
import { MAX_BODY_DEPTH } from '../http/body-depth.ts';
import type { Json } from '../routes/types.ts';
import { jsonContent, RATE_HEADERS, ref } from './parts.ts';

/** Same value as MAX_URL_BYTES in api/app.ts (importing it here would make an import cycle); a test keeps them equal. */
export const DOCUMENTED_MAX_URL_BYTES = 8192;
/** Same value as the express.json limit in api/app.ts. */
export const DOCUMENTED_MAX_BODY = '64kb';

/** The values a declared parameter accepts, as a sentence lists them ("a, b or c"): the document cannot name others. */
function valuesOf(parameters: readonly QueryParameter[] | undefined, name: string, separator = ', '): string {
  const parameter = parameters?.find((candidate) => candidate.name === name);
  const values = parameter ? acceptedValues(parameter) : undefined;
  if (!values || values.length === 0) throw new Error(`no closed parameter ${name} is declared`);
  return separator === ', ' && values.length > 1 ? `${values.slice(0, -1).join(', ')} or ${values.at(-1)}` : values.join(separator);
}
const tensionFilters = TENSIONS.operations.GET?.query;

/** What each stable error code means; the type makes every code of ERROR_CODES appear here. */
export const ERROR_MEANINGS: Record<ErrorCode, string> = {
  PARAM_MISSING:
    'A required parameter or body field (q, identity, for, query) is missing or empty; the body carries param_missing: true, and on GET /api/query also the usage document.',
  PARAM_REPEATED: 'A parameter was given more than once; send it once and join list values with commas.',
  UNKNOWN_PARAMETER: 'A query parameter this path does not take; unknown parameters are rejected so that no filter is silently ignored.',
  UNKNOWN_LAYER: 'An unknown value in layers, sources, exclude, rings, ring or tier (or an empty list). Scoping parameters are never silently ignored.',
  UNKNOWN_EVIDENCE: 'evidence_threshold is not one of the evidence values.',
  UNKNOWN_FORMAT: `format is not ${valuesOf(QUERY_PARAMETER_SPECS, 'format')}.`,
  UNKNOWN_MODE: `mode is not ${valuesOf(QUERY_PARAMETER_SPECS, 'mode')}.`,
  UNKNOWN_GLYPH: `glyph is not one of ${valuesOf(QUERY_PARAMETER_SPECS, 'glyph', ' ')}.`,
  UNKNOWN_CERT: `cert is not ${valuesOf(DIVERGENCES.operations.GET?.query, 'cert')}.`,
  UNKNOWN_STATUS: `status is not ${valuesOf(tensionFilters, 'status')} (or, on GET /api/tensions, lifecycle is not ${valuesOf(tensionFilters, 'lifecycle')}).`,
  INVALID_PARAMETER:
    'A parameter has an invalid value (a flag that is not 1/true/0/false, an out-of-range limit or k, an empty job, an over-long identity or for, a malformed Idempotency-Key header).',
  CONFLICTING_PARAMETERS:
    "Parameters that cannot be combined (two of mode, async, sync, job; job with any other parameter, q included, since a job's answer echoes its own question) or layer filters that exclude every layer.",
  QUERY_TOO_LONG: `q is longer than ${MAX_QUERY_CHARS} characters.`,
  INVALID_JSON: 'The request body is not valid JSON.',
  BODY_TOO_DEEP: `The JSON body nests arrays or objects more than ${MAX_BODY_DEPTH} levels deep (POST /api/mcp answers this as a JSON-RPC -32600 error instead).`,
  BAD_REQUEST: 'The request could not be read (for example an unsupported body encoding or charset).',
  PAYLOAD_TOO_LARGE: `The request body is larger than ${DOCUMENTED_MAX_BODY}.`,
  URI_TOO_LONG: `The request URL is longer than ${DOCUMENTED_MAX_URL_BYTES} bytes; send long questions with POST /api/query.`,
  RECORD_NOT_FOUND:
    'No divergence record has that id (GET /api/divergences?id=, POST /api/contribute). Ids are case-sensitive; details.nearest_ids and suggested_next_call name the closest ids.',
  ROUTE_NOT_FOUND: 'Nothing is served at that path (any path not in this document, or a static file that does not exist).',
  METHOD_NOT_ALLOWED: 'The path does not accept that method; the Allow header and details.allowed list the methods it does accept.',
  SPENDING_CEILING_REACHED:
    "The live panel's spending ceiling leaves no room: every call reserves its worst-case cost (prompt bytes + max_tokens at the model's prices) before it is made, and a call whose reservation would cross the ceiling is not made. Also the error.code of a job whose every call was refused. Live work resumes when an operator raises the ceiling (or calls in flight settle). Use the fast path meanwhile.",
  PERSISTENCE_UNAVAILABLE:
    'Persisting council records or recording tension dispositions is not enabled on this deployment (no INGEST_SECRET configured, or no content folder).',
  STORE_UNAVAILABLE:
    'The store that keeps jobs, sessions, contributions and rate limits cannot be reached for the moment (its database is down or restarting); nothing was acknowledged. Retryable: wait Retry-After seconds and resend writes with the same Idempotency-Key.',
  NOT_READY:
    'GET /api/ready only: this process should not be sent traffic yet (artifacts, store, embedder or panel configuration not ready) or any more (draining after SIGTERM). details.reason says which check fails and details.checks gives each. Retryable: probe again; liveness is GET /api/health.',
  NOT_PERSISTABLE: 'The live-panel result is not a valid divergence record (for example fewer than two voices answered); nothing was stored.',
  PROVIDER_FAILED: 'No model of the live panel could answer (provider errors); also the error.code of a failed job on GET /api/query?job=<id>.',
  AUTH_REQUIRED: 'The request needs Authorization: Bearer <INGEST_SECRET> (persisting a council record, recording a tension disposition).',
  AUTH_INVALID: 'The bearer credential is not the ingestion secret.',
  JOB_NOT_FOUND: 'No background job has that id (unknown or expired).',
  JOB_ALREADY_FINISHED: 'POST /api/jobs/cancel on a job that already ended (done or failed); poll it for its result.',
  SESSION_NOT_FOUND:
    'POST /api/query with a session_id this server did not issue to this client, or one idle for more than 24 h. Session ids are issued by the server: send new_session true (without session_id) to start one. Nothing ran.',
  COUNCIL_NOT_FOUND:
    'POST /api/council {persist: true, council_id} with an id that is unknown or whose result is no longer kept (results are kept 24 h after the council ran). Nothing was stored; run the council again, read it, and persist its council_id.',
  INVALID_BODY: 'The JSON body does not have the documented shape; details name the field.',
  INVALID_JUSTIFICATION: 'The justification of a contribution is not one of the closed vocabulary; the body carries valid_values.',
  UNKNOWN_ACTION: "POST /api/store with an action other than 'propose'.",
  UNKNOWN_SOURCE: 'A proposal cites record ids that are not in the corpus.',
  INVALID_TEXT:
    'A string of a write (any field of a POST body, or a query parameter of a job submission with async=1) contains NUL (U+0000) or an unpaired UTF-16 surrogate, which cannot be stored as text alike on every store driver; details name the field, the problem (nul or lone_surrogate), the index and the character. Not retryable: remove the character and resend. Nothing was stored.',
  IDEMPOTENCY_KEY_REUSED:
    'This client already used the Idempotency-Key for a different request to the same operation (422, as in the IETF Idempotency-Key draft); keys are scoped per client and operation. Use a fresh key for a new request, or resend the original request unchanged to get its answer. Nothing was stored.',
  IDEMPOTENCY_KEY_IN_USE:
    'A request with this Idempotency-Key is still being handled; retryable: wait Retry-After seconds and resend it unchanged to get its answer.',
  TRACK_NOT_FOUND: 'No audio track has that slug.',
  RANGE_NOT_SATISFIABLE: 'A Range request on an audio file asks for bytes past its end; Content-Range: bytes */<size> gives the size.',
  TENSION_NOT_FOUND:
    'POST /api/tensions/dispositions with a key that is no tension of this deployment; GET /api/tensions lists the keys (the id of each tension).',
  REVISION_NOT_FOUND:
    "GET /api/changes?since=<corpus_rev> with a revision that is not in this deployment's history: older than the oldest it lists (details.oldest_rev; the build reads CHANGES_HISTORY_LIMIT commits, a shallow clone fewer) or from another deployment. Not retryable: read /records.json and GET /api/manifest whole, then follow with since=<current_rev>.",
  HISTORY_UNAVAILABLE:
    'GET /api/changes?since=<corpus_rev> on a deployment built without git history of its content (a tarball, a shallow clone of one commit): it cannot tell what changed since an earlier revision, and does not guess. /changes/index.json says the same. Not retryable: read /records.json and GET /api/manifest whole.',
  CONCEPT_NOT_FOUND:
    'GET /api/lineage with a concept that is neither a concept id nor a label; details.nearest and suggested_next_call name the closest concepts.',
  UNKNOWN_DISPOSITION: `disposition is not ${valuesOf(tensionFilters, 'disposition')}.`,
  RATE_LIMITED: 'Too many writes from this client; wait Retry-After seconds, then resend with the same Idempotency-Key.',
  LIVE_PANEL_UNAVAILABLE:
    'The path needs a live model panel (full deliberation, async jobs, trace, council) and none is configured on this deployment; /api/health capabilities list what is wired.',
  ORIGIN_NOT_ALLOWED:
    'A browser Origin outside the allow-list on POST /api/mcp (loopback origins and MCP_ALLOWED_ORIGINS are allowed; requests without Origin are allowed).',
  INTERNAL_ERROR:
    'An unexpected failure, presumed permanent (a bug): not retryable; transient failures have their own codes (STORE_UNAVAILABLE, PROVIDER_FAILED, RATE_LIMITED, IDEMPOTENCY_KEY_IN_USE). details.error_id names the one line the server logged about it (quote it in a report); the envelope carries no stack trace.',
  REQUEST_TIMEOUT:
    "The request head or body did not arrive in full within the server's time limit (BODY_TIMEOUT_MS, default 30 s); answered before routing, then the connection is closed. Resend the whole request.",
  HEADERS_TOO_LARGE: 'The request headers exceed the 16 kB the server reads (answered before routing, in the envelope).',
  JOB_FAILED:
    'Not an HTTP status: the error.code of a background job that failed for a reason other than the providers (GET /api/query?job=<id> answers 200 with status failed).',
  JOB_INTERRUPTED: 'Not an HTTP status: the error.code of a background job interrupted by server restarts twice; it is not retried again.',
  JOB_CANCELLED:
    'Not an HTTP status: the error.code of a background job cancelled with POST /api/jobs/cancel (status cancelled); its model calls were aborted.',
  PUSH_DISABLED: 'POST /api/federation/offer is off on this deployment (FEDERATION_PUSH); peers pull instead.',
  OFFER_UNAUTHENTICATED: 'The offering peer is not one this deployment has pulled from, or its signature does not verify with the key pinned for its origin.',
  OFFER_REFUSED:
    'A signed offer that cannot be staged: a record altered (hash), invalid, of our own prefix, a protocol mismatch, or signed more than 5 minutes from now; details.reason names it.',
};

const STATUS_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: a parameter or the body was rejected. Scoping parameters are never silently ignored.',
  401: 'Authorization required.',
  403: 'Authorization refused.',
  404: 'Not found.',
  409: 'Conflict: a request with the same Idempotency-Key is still being handled (wait Retry-After seconds), or the request does not fit the current state of the resource (e.g. cancelling a job that already ended).',
  405: 'Method not allowed: this path answers only the methods in the Allow header. Every method not documented on this path gets this response.',
  408: 'Request timeout: the request did not arrive in full in time (answered before routing); the connection is closed.',
  413: `Payload too large: the JSON body is larger than ${DOCUMENTED_MAX_BODY}.`,
  414: `URI too long: the request URL is longer than ${DOCUMENTED_MAX_URL_BYTES} bytes.`,
  416: 'Range not satisfiable: no byte of the requested range lies inside the file; Content-Range gives its size.',
  422: 'The Idempotency-Key was already used by this client for a different request to this operation.',
  429: 'Too many requests from this client: wait Retry-After seconds.',
  500: 'Internal error, not retryable; details.error_id names the line the server logged; the envelope carries no stack trace.',
  501: 'Not available in this engine version; the envelope points at what works instead.',
  502: 'A model provider of the live panel failed, or its result could not be used.',
  503: 'Live work or the store is unavailable (no panel configured, spending ceiling reached, no record store, or the store cannot be reached for the moment); the envelope says whether to retry and points at the fast path.',
};

/** The error envelope with `error.code` narrowed to the codes a response can carry. */
function envelopeWithCodes(codes: readonly ErrorCode[]): Json {
  return {
    allOf: [ref('ErrorEnvelope'), { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: [...codes] } } } } }],
  };
}

export function errorResponse(status: number, codes: readonly ErrorCode[], paramMissing: Json, extra400?: Json): Json {
  for (const code of codes) {
    if (ERROR_CODES[code] !== status) throw new Error(`error code ${code} has status ${ERROR_CODES[code]}, not ${status}`);
  }
  let schema = envelopeWithCodes(codes);
  if (status === 400 && codes.includes('PARAM_MISSING')) {
    const others = codes.filter((code) => code !== 'PARAM_MISSING');
    schema = { oneOf: [...(others.length > 0 ? [envelopeWithCodes(others)] : []), paramMissing] };
  }
  if (status === 400 && codes.includes('INVALID_JUSTIFICATION') && extra400) {
    schema = { oneOf: [envelopeWithCodes(codes.filter((code) => code !== 'INVALID_JUSTIFICATION')), extra400] };
  }
  return {
    description: `${STATUS_DESCRIPTIONS[status] ?? 'Error.'} Codes: ${codes.join(', ')}.`,
    ...(status === 405
      ? { headers: { Allow: { description: 'The methods this path accepts, e.g. "GET, HEAD, OPTIONS".', required: true, schema: { type: 'string' } } } }
      : status === 401
        ? { headers: { 'WWW-Authenticate': { description: 'Bearer challenge.', required: true, schema: { type: 'string' } } } }
        : status === 429 || (status === 409 && codes.includes('IDEMPOTENCY_KEY_IN_USE'))
          ? {
              headers: {
                'Retry-After': {
                  description: status === 409 ? 'Seconds to wait (sent with IDEMPOTENCY_KEY_IN_USE).' : 'Seconds to wait.',
                  required: status === 429 || codes.length === 1,
                  schema: { type: 'string' },
                },
                ...RATE_HEADERS,
              },
            }
          : {}),
    content: jsonContent(schema),
    'x-error-codes': [...codes],
  };
}
