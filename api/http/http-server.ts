/**
 * The HTTP server around the app. Requests Node's parser rejects before Express sees them
 * (a request head over its 16 kB limit, malformed bytes) still get the §7 envelope.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';

function envelope(status: number, reason: string, code: string, message: string, action: string): string {
  const body = JSON.stringify({ error: { code, message, agent_action: action, retryable: false, suggested_next_call: { method: 'GET', path: '/api/agent-entry' } } });
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

export function createHttpServer(app: Express): http.Server {
  const server = http.createServer(app);
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    if (error.code === 'HPE_HEADER_OVERFLOW') {
      const head = error.rawPacket?.toString('latin1') ?? '';
      const requestLine = head.split('\r\n', 1)[0] ?? '';
      const lineEnded = head.includes('\r\n');
      socket.end(
        !lineEnded || requestLine.length > 8192
          ? envelope(414, 'URI Too Long', 'URI_TOO_LONG', 'the request URL is longer than 8192 bytes', 'Shorten the query; send long questions with POST /api/query.')
          : envelope(431, 'Request Header Fields Too Large', 'HEADERS_TOO_LARGE', 'the request headers are larger than the server accepts (16 kB in all)', 'Send fewer or shorter headers.'),
      );
      return;
    }
    socket.end(envelope(400, 'Bad Request', 'BAD_REQUEST', 'the request could not be parsed as HTTP', 'Send a well-formed HTTP/1.1 request.'));
  });
  return server;
}
