import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { Capabilities } from '../../core/capabilities.ts';
import type { ErrorCode, RawQuery, SuggestedCall } from '../../schemas/errors.ts';
import type { Corpus } from '../load-artifacts.ts';
import type { LiveService } from '../live/service.ts';
import type { Limiter, RateLimits } from '../http/rate-limit.ts';
import type { Store } from '../../storage/store.ts';
import type { DispositionDeps } from '../tensions/record-disposition.ts';
import type { ParsedQuery, QueryParameter } from '../../schemas/api/parameters.ts';

export interface RouteContext {
  corpus: Corpus;
  capabilities: Capabilities;
  now: () => Date;
  /** Present when a live panel is configured. */
  live?: LiveService;
  /** Bearer secret for persisting council records; persistence is off without it. */
  ingestSecret?: string;
  /** Appends a tension disposition to the content folder; POST /api/tensions/dispositions is off without it. */
  appendDisposition?: DispositionDeps['append'];
  /** Set by createApp: rate limits on writes and live paths. */
  limiter?: Limiter;
  limits?: RateLimits;
  /** Set by createApp: one line per server-side problem. */
  log?: (line: string) => void;
  /** Set by createApp: the store that also keeps Idempotency-Keys of job submissions. */
  store?: Store;
}

export type Method = 'GET' | 'POST';

export type Json = Record<string, unknown>;

/**
 * A body shape: a zod schema (a component of /openapi.json when it is named in `apiSchemas`,
 * else written inline), a choice among shapes, or a JSON Schema for a shape no handler of
 * ours builds (JSON-RPC errors of the MCP SDK, file bytes).
 */
export type Shape = z.ZodType | { oneOf: Shape[] } | { anyOf: Shape[] } | { jsonSchema: Json };

export type { QueryParameter };

export interface PathParameter {
  name: string;
  description: string;
  example: string;
  /** Default: a non-empty string. */
  schema?: z.ZodType;
}

export interface ResponseSpec {
  description: string;
  /** Media type → body shape; none for a response without a body. */
  content?: Record<string, Shape>;
  headers?: Json;
  /** A sync live path: the same run is also streamed as Server-Sent Events. */
  eventStream?: boolean;
  /** Vendor extensions (x-…) of the response object. */
  extensions?: Json;
}

export type ErrorMap = Partial<Record<number, readonly ErrorCode[]>>;

/**
 * What one method of a path takes and answers, as /openapi.json states it. The shared
 * answers (malformed or over-large POST bodies, 405, 408, 414, 431, 500) are added by
 * api/openapi.ts to every operation.
 */
export interface OperationSpec {
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  /**
   * The query parameters, parsed by the route table before the handler (api/routes/input.ts):
   * unknown, repeated, missing and refused values answer 400 from the declaration. Absent: the
   * query is not read (a POST whose input is its body); [] takes no parameter at all.
   */
  query?: readonly QueryParameter[];
  path?: PathParameter[];
  /** Takes an Idempotency-Key header. */
  idempotencyKey?: boolean;
  body?: { schema: Shape; description: string; required: boolean };
  security?: Json[];
  responses: Record<number, ResponseSpec>;
  /** Error codes by status. */
  errors?: ErrorMap;
  /** Schema of a PARAM_MISSING 400 (GET /api/query also carries the usage document). */
  paramMissing?: z.ZodType;
  /** Schema of an INVALID_JUSTIFICATION 400 (it carries valid_values). */
  invalidJustification?: z.ZodType;
  /** A 400 may also be a JSON-RPC error, and bodies are checked by the protocol (the MCP endpoint). */
  jsonRpc?: boolean;
  /** Answered like a static file (ETag, Last-Modified, 304 on a match) though a route serves it. */
  servedAsFile?: boolean;
}

/** A path and what each of its methods takes and answers. */
export interface RouteSpec {
  path: string;
  operations: Partial<Record<Method, OperationSpec>>;
}

/**
 * A path, the handler of each method it accepts (every other method gets 405) and the
 * description of each (the route table is what /openapi.json is generated from).
 */
export interface RouteDefinition extends RouteSpec {
  methods: Partial<Record<Method, RouteHandler>>;
  /**
   * Rules across parameters (a conflict, one required unless another is given), run on the
   * parsed query inside the same mending loop as the declarations; what it returns is the
   * handler's input.query. `given` names the parameters the request carried.
   */
  refine?: Partial<Record<Method, (query: Record<string, unknown>, given: readonly string[]) => unknown>>;
  /** How the route table reads a method's declared body (a zod schema): a step before it, and the mend of a refused one. */
  bodies?: Partial<Record<Method, BodyStep>>;
  /** The route refuses over-deep bodies itself, in its own protocol (MCP: a JSON-RPC error). */
  answersDeepBodies?: boolean;
}

/**
 * The route table parses a declared body (a zod schema; not a JSON-RPC one) before the handler:
 * a body the schema refuses is 400 INVALID_BODY naming each issue, with `mend`'s call as its
 * suggested_next_call.
 */
export interface BodyStep {
  /** What answers before the body's shape (the ingestion secret, a rate limit, the action of a proposal). */
  before?: (request: Request, response: Response) => Promise<void> | void;
  /**
   * The schema the table parses with, when it differs from the documented one: a field with a
   * code of its own (a justification outside the vocabulary is INVALID_JUSTIFICATION, not
   * INVALID_BODY) is read loosely here and refused by the handler.
   */
  schema?: z.ZodType;
  /** What to do, when naming the fields is not enough (a signed offer's shape). */
  action?: string;
  /** The same call mended (valid fields kept, the rest from the deployment's example); `query` is the parsed query. */
  mend?: (body: unknown, query: unknown) => SuggestedCall | undefined;
}

/** What the route table parsed before the handler ran. */
export interface RouteInput {
  /** The declared query parameters as typed values (or what the route's refine made of them); {} when the query is not declared. */
  query: unknown;
  /** The query as it was received (parsed or not), for what echoes it (received_params, an idempotency fingerprint). */
  raw: RawQuery;
  /** The declared body as its schema outputs it; undefined when the operation declares none the table parses. */
  body: unknown;
  /** The Idempotency-Key header of an operation that declares one (checked: 1-200 visible ASCII characters), or null. */
  idempotencyKey: string | null;
}

/** A handler of the route table: the request, the response and the input parsed from its declaration. */
export type RouteHandler = (request: Request, response: Response, input: RouteInput) => Promise<void> | void;

/** The parsed query, typed by the declarations it was parsed with. */
export function queryOf<const Ps extends readonly QueryParameter[]>(input: RouteInput, _parameters: Ps): ParsedQuery<Ps> {
  return input.query as ParsedQuery<Ps>;
}

/** The parsed body, typed by the schema it was parsed with. */
export function bodyOf<S extends z.ZodType>(input: RouteInput, _schema: S): z.output<S> {
  return input.body as z.output<S>;
}

/**
 * A static file served as it is (express.static or the media handler), not by the route
 * table: documented all the same; 404 ROUTE_NOT_FOUND when absent, 304 on a matching
 * conditional GET.
 */
export interface FileSpec {
  path: string;
  get: OperationSpec;
}

/**
 * Sends `body` as JSON. The schema (or the schemas, one of which the body has) only types it:
 * nothing is re-validated at run time; the contract tests check real bodies against the document.
 */
export function send<S extends z.ZodType>(response: Response, _schema: S | readonly S[], body: z.output<S>, status = 200): void {
  response.status(status).json(body);
}
