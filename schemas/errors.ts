/**
 * One error type and one catalogue of stable codes. Routes throw ApiError; one
 * middleware renders the spec's §7 envelope. Unknown errors become 500 with no stack.
 */

export interface SuggestedCall {
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  /** Request headers the call needs, e.g. the same Idempotency-Key to collect a pending answer. */
  headers?: Record<string, string>;
}

/** Query parameters as the app parses them (repeats become arrays). */
export type RawQuery = Record<string, string | string[] | undefined>;

/** How a refused GET is mended (a parameter dropped, a value replaced); see core/next-call.ts. */
export type QueryRepair = (raw: RawQuery) => RawQuery;

export interface ErrorEnvelope {
  error: {
    code: string;
    message: string;
    agent_action: string;
    retryable: boolean;
    suggested_next_call: SuggestedCall | null;
    details?: Record<string, unknown>;
  };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly agentAction: string,
    readonly options: {
      retryable?: boolean;
      suggestedNextCall?: SuggestedCall | null;
      details?: Record<string, unknown>;
      /** Extra top-level fields beside `error` (e.g. the usage document with param_missing). */
      extra?: Record<string, unknown>;
      headers?: Record<string, string>;
      /** For a refused GET parameter: the mend that makes the same GET acceptable (never rendered). */
      repair?: QueryRepair;
    } = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toBody(): ErrorEnvelope & Record<string, unknown> {
    return {
      ...this.options.extra,
      error: {
        code: this.code,
        message: this.message,
        agent_action: this.agentAction,
        retryable: this.options.retryable ?? false,
        suggested_next_call: this.options.suggestedNextCall ?? null,
        ...(this.options.details ? { details: this.options.details } : {}),
      },
    };
  }
}

/** Every code the API emits, with its status, for the OpenAPI document and tests. */
export const ERROR_CODES = {
  PARAM_MISSING: 400,
  PARAM_REPEATED: 400,
  UNKNOWN_PARAMETER: 400,
  UNKNOWN_LAYER: 400,
  UNKNOWN_EVIDENCE: 400,
  UNKNOWN_FORMAT: 400,
  UNKNOWN_MODE: 400,
  UNKNOWN_GLYPH: 400,
  UNKNOWN_CERT: 400,
  UNKNOWN_STATUS: 400,
  INVALID_PARAMETER: 400,
  CONFLICTING_PARAMETERS: 400,
  QUERY_TOO_LONG: 400,
  INVALID_JSON: 400,
  BODY_TOO_DEEP: 400,
  BAD_REQUEST: 400,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  HEADERS_TOO_LARGE: 431,
  RECORD_NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  LIVE_PANEL_UNAVAILABLE: 503,
  SPENDING_CEILING_REACHED: 503,
  PERSISTENCE_UNAVAILABLE: 503,
  STORE_UNAVAILABLE: 503,
  NOT_READY: 503,
  NOT_PERSISTABLE: 502,
  PROVIDER_FAILED: 502,
  AUTH_REQUIRED: 401,
  AUTH_INVALID: 403,
  ORIGIN_NOT_ALLOWED: 403,
  JOB_NOT_FOUND: 404,
  JOB_ALREADY_FINISHED: 409,
  SESSION_NOT_FOUND: 404,
  COUNCIL_NOT_FOUND: 404,
  INVALID_BODY: 400,
  INVALID_JUSTIFICATION: 400,
  UNKNOWN_ACTION: 400,
  UNKNOWN_SOURCE: 400,
  INVALID_TEXT: 400,
  IDEMPOTENCY_KEY_REUSED: 422,
  IDEMPOTENCY_KEY_IN_USE: 409,
  TRACK_NOT_FOUND: 404,
  RANGE_NOT_SATISFIABLE: 416,
  CONCEPT_NOT_FOUND: 404,
  TENSION_NOT_FOUND: 404,
  REVISION_NOT_FOUND: 404,
  HISTORY_UNAVAILABLE: 404,
  UNKNOWN_DISPOSITION: 400,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  JOB_FAILED: 500,
  JOB_INTERRUPTED: 500,
  JOB_CANCELLED: 500,
  PUSH_DISABLED: 403,
  OFFER_UNAUTHENTICATED: 403,
  OFFER_REFUSED: 422,
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

export function apiError(code: ErrorCode, message: string, agentAction: string, options: ApiError['options'] = {}): ApiError {
  return new ApiError(ERROR_CODES[code], code, message, agentAction, options);
}
