/**
 * The HTTP server around the app. Requests Node's parser rejects before Express sees them
 * (a request head over its 16 kB limit, malformed bytes, a request that never arrives in
 * full) still get the §7 envelope, with the CORS headers every other answer carries.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import { CORS_HEADERS } from './middleware.ts';

export interface HttpServerOptions {
  /**
   * Time to receive a whole request, head and body (BODY_TIMEOUT_MS). A client that announces
   * a body and never sends it is answered 408 and disconnected instead of holding a socket.
   */
  requestTimeoutMs?: number;
}

/** Node's own default: 5 minutes. */
const NODE_REQUEST_TIMEOUT_MS = 300_000;
/** Node's default time to receive the request head; never more than the whole request's. */
const HEADERS_TIMEOUT_MS = 60_000;

/**
 * The answer as bytes. An answer to HEAD has the headers a GET would get and no body: a body
 * there would be read by the client as the start of a next response (Node's client refuses
 * it: "Data after `Connection: close`").
 */
function envelope(head: boolean, status: number, reason: string, code: string, message: string, action: string, retryable = false): string {
  const body = JSON.stringify({ error: { code, message, agent_action: action, retryable, suggested_next_call: { method: 'GET', path: '/api/agent-entry' } } });
  const cors = Object.entries(CORS_HEADERS)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\n${cors}Connection: close\r\n\r\n${head ? '' : body}`;
}

/**
 * Whether the request being refused is a HEAD: from the request already parsed (a body that
 * timed out), else from the first bytes of the head Node could not parse.
 */
function isHead(error: { rawPacket?: Buffer }, socket: Duplex & { parser?: { incoming?: { method?: string } | null } | null }): boolean {
  const parsed = socket.parser?.incoming?.method;
  if (parsed) return parsed === 'HEAD';
  return /^\s*HEAD /.test(error.rawPacket?.subarray(0, 16).toString('latin1') ?? '');
}

export function createHttpServer(app: Express, options: HttpServerOptions = {}): http.Server {
  const requestTimeout = options.requestTimeoutMs ?? NODE_REQUEST_TIMEOUT_MS;
  const server = http.createServer(
    {
      requestTimeout,
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, requestTimeout),
      // Node checks the deadlines on this period (default 30 s): a tenth of the timeout keeps
      // the answer close to it.
      connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(requestTimeout / 10))),
    },
    app,
  );
  server.on(
    'clientError',
    (
      error: NodeJS.ErrnoException & { rawPacket?: Buffer },
      socket: Duplex & { _httpMessage?: { headersSent?: boolean }; parser?: { incoming?: { method?: string } | null } | null },
    ) => {
      // Once the app has answered (a 413 while the announced body still trickles in), a second
      // answer would corrupt the stream: only close.
      if (!socket.writable || socket._httpMessage?.headersSent) {
        socket.destroy();
        return;
      }
      const head = isHead(error, socket);
      if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
        socket.end(
          envelope(
            head,
            408,
            'Request Timeout',
            'REQUEST_TIMEOUT',
            `the request did not arrive in full within ${requestTimeout} ms`,
            'Resend the whole request, head and body, without pausing.',
            true,
          ),
        );
        return;
      }
      if (error.code === 'HPE_HEADER_OVERFLOW') {
        const received = error.rawPacket?.toString('latin1') ?? '';
        const requestLine = received.split('\r\n', 1)[0] ?? '';
        const lineEnded = received.includes('\r\n');
        socket.end(
          !lineEnded || requestLine.length > 8192
            ? envelope(
                head,
                414,
                'URI Too Long',
                'URI_TOO_LONG',
                'the request URL is longer than 8192 bytes',
                'Shorten the query; send long questions with POST /api/query.',
              )
            : envelope(
                head,
                431,
                'Request Header Fields Too Large',
                'HEADERS_TOO_LARGE',
                'the request headers are larger than the server accepts (16 kB in all)',
                'Send fewer or shorter headers.',
              ),
        );
        return;
      }
      socket.end(envelope(head, 400, 'Bad Request', 'BAD_REQUEST', 'the request could not be parsed as HTTP', 'Send a well-formed HTTP/1.1 request.'));
    },
  );
  return server;
}
