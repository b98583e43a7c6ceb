/**
 * Answers Node gives before Express sees a request, over a real socket: CORS headers on them
 * as on every other answer (a browser client can read the envelope), and a request whose
 * body never finishes is answered 408 and closed instead of holding the connection.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../api/http/http-server.ts';
import { buildApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { rawRequest, type RawResponse } from './helpers/fuzz.ts';

/** Short enough for a test; the server's default is BODY_TIMEOUT_MS (30 s). */
const REQUEST_TIMEOUT_MS = 500;
/** How long a test waits for an answer before calling the connection stuck: far above the timeout. */
const STUCK_AFTER_MS = 20_000;

let server: Server;
let port: number;

beforeAll(async () => {
  const built = await buildApp(writeFixtureContent());
  server = createHttpServer(built.app, { requestTimeoutMs: REQUEST_TIMEOUT_MS }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

afterAll(() => {
  server?.closeAllConnections();
  server?.close();
});

/** A request head; keep-alive where the test is whether the server itself lets go of the connection. */
const head = (method: string, target: string, headers = '', connection: 'close' | 'keep-alive' = 'close') =>
  `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: ${connection}\r\n${headers}\r\n`;

function expectEnvelope(response: RawResponse, status: number, code: string): void {
  expect(response.status, `${response.statusLine} ${response.body.slice(0, 200)}`).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(JSON.parse(response.body).error).toMatchObject({ code });
  expect(response.headers['access-control-allow-origin']).toBe('*');
  expect(response.headers['access-control-expose-headers']).toContain('Retry-After');
}

describe('errors answered before routing carry the CORS headers', () => {
  it('414 URI_TOO_LONG (a URL past the 16 kB request head)', async () => {
    const response = await rawRequest(port, Buffer.from(head('GET', `/api/query?q=${'a'.repeat(20_000)}`), 'latin1'));
    expectEnvelope(response, 414, 'URI_TOO_LONG');
  });

  it('431 HEADERS_TOO_LARGE', async () => {
    const response = await rawRequest(port, Buffer.from(head('GET', '/api/health', `X-Pad: ${'a'.repeat(20_000)}\r\n`), 'latin1'));
    expectEnvelope(response, 431, 'HEADERS_TOO_LARGE');
  });

  it('400 BAD_REQUEST (a request Node cannot parse)', async () => {
    const response = await rawRequest(port, Buffer.from(head('GET', '/api/health', 'garbage\r\n'), 'latin1'));
    expectEnvelope(response, 400, 'BAD_REQUEST');
  });
});

describe('bodies that never finish', () => {
  it(
    'a JSON body announced and never completed: 408 REQUEST_TIMEOUT in the envelope, then the connection closes',
    async () => {
      const payload = head('POST', '/api/play', 'Content-Type: application/json\r\nContent-Length: 1000\r\n', 'keep-alive') + '{"slug":';
      const response = await rawRequest(port, Buffer.from(payload, 'latin1'), STUCK_AFTER_MS);
      expectEnvelope(response, 408, 'REQUEST_TIMEOUT');
      expect(JSON.parse(response.body).error.retryable).toBe(true);
      expect(response.closed).toBe(true);
    },
    STUCK_AFTER_MS + 5_000,
  );

  it(
    'a 50 MB body announced and never sent: refused 413 at once, and the connection does not stay open',
    async () => {
      const payload = head('POST', '/api/query', 'Content-Type: application/json\r\nContent-Length: 52428800\r\n', 'keep-alive') + '{"query":';
      const response = await rawRequest(port, Buffer.from(payload, 'latin1'), STUCK_AFTER_MS);
      expectEnvelope(response, 413, 'PAYLOAD_TOO_LARGE');
      expect(response.closed, 'the connection was still open').toBe(true);
    },
    STUCK_AFTER_MS + 5_000,
  );
});
