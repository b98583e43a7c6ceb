/**
 * The one seam between the MCP tools and the service: a tool describes an HTTP request,
 * and a `CallApp` answers it. In the HTTP transport and in stdio's local mode that is the
 * same Express app, called in-process; with `--url` it is a running server over fetch.
 * So a tool behaves exactly as the HTTP endpoint it wraps, errors included.
 */

export interface AppRequest {
  method: 'GET' | 'POST';
  /** Path under the base URL, e.g. `/api/query`; no query string. */
  path: string;
  /** Query parameters; undefined values are left out. */
  query?: Record<string, string | undefined>;
  /** JSON body for POST. */
  body?: unknown;
  /** Extra request headers (e.g. Idempotency-Key). */
  headers?: Record<string, string>;
}

export interface AppResponse {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON when the response is JSON, else the text. */
  body: unknown;
}

export type CallApp = (request: AppRequest, signal?: AbortSignal) => Promise<AppResponse>;

/** What every tool is given: the way to reach the service, and a clock for polling. */
export interface ToolDeps {
  call: CallApp;
  /** Waits `ms` (or until the signal aborts); injectable so tests need not sleep. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Builds the path and query string the app parses (WHATWG, like parseQueryString). */
export function requestTarget(request: AppRequest): string {
  const parameters = new URLSearchParams();
  for (const [name, value] of Object.entries(request.query ?? {})) {
    if (value !== undefined) parameters.append(name, value);
  }
  const search = parameters.toString();
  return search ? `${request.path}?${search}` : request.path;
}

export function parseBody(text: string, contentType: string | undefined): unknown {
  if (contentType?.includes('json') && text.length > 0) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}
