/**
 * POST /api/mcp: the MCP server over Streamable HTTP, stateless. Each POST gets a fresh
 * server and transport (no session id, JSON responses rather than SSE), and its tools
 * call this same Express app in-process with the caller's address, so rate limits and
 * every behaviour match the HTTP API. GET and DELETE are not routes here: the route
 * table answers them 405 in the error envelope, which is what a stateless server
 * without a standalone SSE stream must answer.
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { ErrorRequestHandler, Request } from 'express';
import { ApiError } from '../../schemas/errors.ts';
import { MAX_BODY_DEPTH, nestsDeeperThan } from '../http/body-depth.ts';
import { toApiError } from '../http/middleware.ts';
import type { RouteDefinition } from '../routes/types.ts';
import { createInProcessCall } from './in-process.ts';
import { isOriginAllowed, parseAllowedOrigins } from './origin.ts';
import { createMcpServer } from './server.ts';
import { JSON_RPC_ERROR, ok } from '../openapi/parts.ts';
import type { RouteSpec } from '../routes/types.ts';

export interface McpHttpOptions {
  /** Browser origins allowed besides loopback ones; default: MCP_ALLOWED_ORIGINS (comma list). */
  allowedOrigins?: readonly string[];
}

export const MCP_PATH = '/api/mcp';

const jsonRpcMessage = { jsonSchema: { anyOf: [{ type: 'object' }, { type: 'array' }] } };
const jsonRpcError = (description: string) => ({ ...ok(description, { jsonSchema: JSON_RPC_ERROR }), extensions: { 'x-json-rpc-error': true } });

export const MCP_ROUTE: RouteSpec = {
  path: MCP_PATH,
  operations: {
    POST: {
      operationId: 'mcpPost',
      tags: ['tools'],
      summary: 'Model Context Protocol over Streamable HTTP (stateless, JSON responses)',
      description: `One JSON-RPC 2.0 message (or batch) per request: initialize, tools/list, tools/call with the 10 tools described in docs/MCP.md (info, fast_context, read_divergences, kin, lineage, deliberate, trace, council, contribute, changes: the spec's 8 plus lineage and changes). Protocol-level problems answer in JSON-RPC error form (400, 406), among them a body nested more than ${MAX_BODY_DEPTH} levels deep (400, -32600 Invalid Request); HTTP-level problems in the error envelope. Requests with a browser Origin outside the allow-list (loopback origins and MCP_ALLOWED_ORIGINS) get 403 ORIGIN_NOT_ALLOWED; requests without Origin are allowed. GET and DELETE answer 405: the server is stateless and opens no event stream.`,
      body: { schema: jsonRpcMessage, description: 'A JSON-RPC 2.0 message.', required: true },
      responses: {
        200: ok('A JSON-RPC 2.0 response.', jsonRpcMessage),
        202: { description: 'A notification or response was accepted; no body.' },
        406: jsonRpcError('The Accept header allows neither JSON nor an event stream (JSON-RPC error).'),
        415: jsonRpcError('The body is not application/json (JSON-RPC error).'),
      },
      errors: { 403: ['ORIGIN_NOT_ALLOWED'] },
      jsonRpc: true,
    },
  },
};

function originNotAllowed(origin: string): ApiError {
  return new ApiError(
    403,
    'ORIGIN_NOT_ALLOWED',
    `requests from the browser origin ${JSON.stringify(origin)} are not allowed on ${MCP_PATH}`,
    'Call from a server-side agent or desktop client (they send no Origin header), from a loopback origin, or ask the operator to add your origin to MCP_ALLOWED_ORIGINS.',
    // The plain HTTP API answers any origin (CORS *): the next call a browser page can make.
    { retryable: false, details: { origin }, suggestedNextCall: { method: 'GET', path: '/api/agent-entry' } },
  );
}

export function mcpRoutes(options: McpHttpOptions = {}): RouteDefinition[] {
  // Parsed once, when the app is created; a bad value fails start-up with its name.
  const allowedOrigins = options.allowedOrigins ?? parseAllowedOrigins(process.env.MCP_ALLOWED_ORIGINS);
  return [
    {
      ...MCP_ROUTE,
      answersDeepBodies: true,
      methods: {
        POST: async (request, response) => {
          const origin = request.get('origin');
          if (origin !== undefined && !isOriginAllowed(origin, allowedOrigins)) throw originNotAllowed(origin);
          // A call that asks for progress, from a client that accepts event streams, is answered
          // as a stream (progress notifications, then the result); every other call as JSON.
          const streamed = asksForProgress(request.body) && /text\/event-stream/i.test(request.get('accept') ?? '');
          acceptJsonAnswers(request);
          if (nestsDeeperThan(request.body)) {
            response.status(400).json(tooDeep(request.body));
            return;
          }
          const invalid = invalidBatchOrCall(request.body);
          if (invalid) {
            response.json(invalid);
            return;
          }
          const server = createMcpServer({ call: inProcessCallFor(request) });
          const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !streamed });
          response.on('close', () => {
            void transport.close();
            void server.close();
          });
          await server.connect(transport);
          await transport.handleRequest(request, response, request.body);
        },
      },
    },
  ];
}

const BOTH = 'application/json, text/event-stream';

/** A single tools/call whose params carry _meta.progressToken. */
function asksForProgress(body: unknown): boolean {
  if (!isPlainObject(body) || body.method !== 'tools/call' || !isPlainObject(body.params)) return false;
  const meta = body.params._meta;
  return isPlainObject(meta) && (typeof meta.progressToken === 'string' || typeof meta.progressToken === 'number');
}

/**
 * Streamable HTTP asks clients to accept both JSON and SSE, and the SDK answers 406
 * otherwise. This server answers JSON unless a call asks for progress, so a client that accepts JSON (or sends
 * no Accept, like plain curl) is served as if it had asked properly: no install, no ritual.
 */
function acceptJsonAnswers(request: Request): void {
  const accept = request.headers.accept;
  if (accept !== undefined && accept.includes('application/json') && accept.includes('text/event-stream')) return;
  if (accept !== undefined && !accept.includes('application/json') && !accept.includes('*/*')) return;
  request.headers.accept = BOTH;
  const raw = request.rawHeaders;
  for (let index = raw.length - 2; index >= 0; index -= 2) {
    if (raw[index]!.toLowerCase() === 'accept') raw.splice(index, 2);
  }
  raw.push('Accept', BOTH);
}

function inProcessCallFor(request: Request) {
  const userAgent = request.get('user-agent');
  return createInProcessCall(request.app, {
    // request.ip already honours the app's trust proxy setting.
    remoteAddress: request.ip ?? request.socket.remoteAddress ?? '127.0.0.1',
    host: request.get('host') ?? 'localhost',
    headers: { 'user-agent': `${userAgent ? `${userAgent} ` : ''}via-mcp` },
  });
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The id to answer with: the message's own when it is usable, else null (JSON-RPC 2.0 §5). */
const idOf = (message: unknown) => (isPlainObject(message) && (typeof message.id === 'string' || typeof message.id === 'number') ? message.id : null);

/**
 * A body nested past MAX_BODY_DEPTH is refused whole, before the SDK or any tool walks it:
 * one JSON-RPC "Invalid Request" error, as for any message that cannot be served.
 */
function tooDeep(body: unknown) {
  return {
    jsonrpc: '2.0',
    id: idOf(body),
    error: { code: -32600, message: `Invalid Request: the body nests arrays or objects more than ${MAX_BODY_DEPTH} levels deep` },
  };
}

/**
 * A batch with an unusable tool call is answered whole: errors for the bad calls, and a
 * request to resend the others one by one (MCP itself no longer uses batches). Batches do
 * not nest: an array inside a batch is an invalid message, left to the SDK to refuse.
 */
function invalidBatchOrCall(body: unknown): unknown {
  if (!Array.isArray(body)) return invalidToolCall(body);
  const answers = body.map((message) => invalidToolCall(message));
  if (!answers.some(Boolean)) return undefined;
  return body.flatMap((message, index) => {
    if (answers[index]) return [answers[index]];
    if (!isPlainObject(message) || !('id' in message)) return [];
    return [
      {
        jsonrpc: '2.0',
        id: idOf(message),
        error: { code: -32600, message: 'Invalid request: another message in this batch was invalid; send this one on its own' },
      },
    ];
  });
}

/**
 * The SDK turns a tools/call whose params do not parse into -32603 with a raw validation
 * dump; a caller deserves -32602 invalid params saying what is wrong.
 */
function invalidToolCall(body: unknown): unknown {
  if (!isPlainObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call' || !('id' in body)) return undefined;
  const params = body.params;
  let problem: string | undefined;
  if (!isPlainObject(params)) problem = 'params must be an object {name, arguments}';
  else if (typeof params.name !== 'string' || params.name === '') problem = 'params.name must be the name of a tool (see tools/list)';
  else if (params.arguments !== undefined && !isPlainObject(params.arguments)) problem = 'params.arguments must be an object';
  if (!problem) return undefined;
  return { jsonrpc: '2.0', id: idOf(body), error: { code: -32602, message: `Invalid params: ${problem}` } };
}

/**
 * A body that is not JSON at all (or not readable as UTF-8 JSON) still gets a JSON-RPC answer on
 * the MCP endpoint: "Parse error" (-32700), with the service's error envelope as its data so an
 * agent finds the same code and agent_action as anywhere else. Registered before the general
 * error handler; every other error passes on to it.
 */
export function mcpBodyErrorHandler(log: (line: string) => void): ErrorRequestHandler {
  return (error: unknown, request, response, next) => {
    if (response.headersSent || request.path !== '/api/mcp' || request.method !== 'POST') return next(error);
    const refused = toApiError(error, log, request);
    if (refused.code !== 'INVALID_JSON' && refused.code !== 'BAD_REQUEST') return next(error);
    response.status(400).json({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${refused.message}`, data: refused.toBody().error } });
  };
}
