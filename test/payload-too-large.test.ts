/**
 * Issue 26, item 2: a 20 MB body to a write route was refused before it was read (good) and
 * the connection closed while the client was still writing, so the kernel reset it and a
 * client that writes its whole body before reading never saw the 413. The refusal now closes
 * lingering: the answer, then a FIN, then the rest of the body read and discarded.
 */
import { once } from 'node:events';
import http, { type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../api/http/http-server.ts';
import { buildApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

const TWENTY_MB = 20 * 1024 * 1024;
/** Every operation with a JSON body (MCP included: its 413 is the envelope too). */
const WRITE_PATHS = [
  '/api/contribute',
  '/api/store',
  '/api/query',
  '/api/council',
  '/api/play',
  '/api/tensions/dispositions',
  '/api/jobs/cancel',
  '/api/federation/offer',
  '/api/mcp',
];

let server: Server;
let port: number;
/** The same app with a short linger that gives up after 1 MB, to see the bounds hold. */
let bounded: Server;
let boundedPort: number;

beforeAll(async () => {
  const contentDir = writeFixtureContent();
  const [built, small] = await Promise.all([buildApp(contentDir), buildApp(contentDir, { linger: { idleMs: 200, totalMs: 2_000, maxBytes: 1024 * 1024 } })]);
  server = createHttpServer(built.app).listen(0, '127.0.0.1');
  bounded = createHttpServer(small.app).listen(0, '127.0.0.1');
  await Promise.all([once(server, 'listening'), once(bounded, 'listening')]);
  port = (server.address() as AddressInfo).port;
  boundedPort = (bounded.address() as AddressInfo).port;
});

afterAll(() => {
  for (const open of [server, bounded]) {
    open?.closeAllConnections();
    open?.close();
  }
});

/** A JSON body of `size` bytes: valid JSON, one long string. */
function bigBody(size: number): Buffer {
  const body = Buffer.alloc(size, 'a');
  body.write('{"q":"', 0);
  body.write('"}', size - 2);
  return body;
}

interface Received {
  status: number;
  head: string;
  body: string;
  /** Whether every byte of the request was accepted by the socket before the answer was read. */
  wroteAll: boolean;
  writeError?: string;
}

/**
 * A client that writes its whole request (head and body, Content-Length or chunked) and only
 * then starts reading, as a simple client does; the answer waits in the kernel meanwhile.
 */
function writeThenRead(path: string, body: Buffer, framing: 'content-length' | 'chunked', to = port): Promise<Received> {
  return new Promise((resolve) => {
    const socket = connect({ port: to, host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    let wroteAll = false;
    let writeError: string | undefined;
    const finish = () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const end = raw.indexOf('\r\n\r\n');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0),
        head: end >= 0 ? raw.slice(0, end) : raw,
        body: end >= 0 ? raw.slice(end + 4) : '',
        wroteAll,
        ...(writeError ? { writeError } : {}),
      });
    };
    socket.on('error', (error) => {
      writeError ??= error.message;
    });
    socket.on('close', finish);
    socket.on('connect', () => {
      socket.pause();
      const framingHeader = framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${body.length}`;
      socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${framingHeader}\r\n\r\n`);
      const parts: Buffer[] = [];
      for (let offset = 0; offset < body.length; offset += 256 * 1024) {
        const part = body.subarray(offset, offset + 256 * 1024);
        parts.push(framing === 'chunked' ? Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]) : part);
      }
      if (framing === 'chunked') parts.push(Buffer.from('0\r\n\r\n'));
      socket.write(Buffer.concat(parts), (error) => {
        wroteAll = !error;
        if (error) writeError ??= error.message;
        // Only now read what the server answered.
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.resume();
      });
    });
  });
}

describe('413 to a client that writes the whole body before reading', () => {
  for (const framing of ['content-length', 'chunked'] as const) {
    it.each(WRITE_PATHS)(`%s, 20 MB (${framing}): the 413 envelope, readable, then the connection closes`, async (path) => {
      const received = await writeThenRead(path, bigBody(TWENTY_MB), framing);
      expect(received.writeError, 'the server reset the connection while the body was being written').toBeUndefined();
      expect(received.wroteAll).toBe(true);
      expect(received.status, received.head).toBe(413);
      expect(received.head).toMatch(/\r\nConnection: close/i);
      expect(received.head).toMatch(/\r\nContent-Type: application\/json/i);
      const error = (JSON.parse(received.body) as { error: Record<string, unknown> }).error;
      expect(error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', retryable: false, details: { max_bytes: 65536 } });
      expect(error.agent_action).toMatch(/Shorten the body/);
    });
  }

  it('Node’s own http client (Content-Length, body written in full) reads the 413 envelope', async () => {
    const body = bigBody(TWENTY_MB);
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const outgoing = http.request(
        { host: '127.0.0.1', port, path: '/api/contribute', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } },
        (response) => {
          const parts: Buffer[] = [];
          response.on('data', (chunk: Buffer) => parts.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }));
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.text).error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('the connection does not linger past the client: after the whole body arrives, the server closes', async () => {
    const received = await writeThenRead('/api/store', bigBody(2 * 1024 * 1024), 'content-length');
    // The promise settles on 'close': the server let go once the request was read.
    expect(received.status).toBe(413);
  });
});

describe('the linger is bounded', () => {
  it('a client that announces 50 MB, sends 100 kB and then nothing is answered 413 and let go (idle bound)', async () => {
    // allowHalfOpen: the server's FIN after its answer does not make this client close its side.
    const socket = connect({ port: boundedPort, host: '127.0.0.1', allowHalfOpen: true });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    await once(socket, 'connect');
    socket.write(`POST /api/contribute HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n`);
    socket.write(Buffer.alloc(100 * 1024, 'a'));
    await once(socket, 'end');
    expect(Buffer.concat(chunks).toString('utf8')).toMatch(/^HTTP\/1\.1 413 [\s\S]*"PAYLOAD_TOO_LARGE"/);
    // A byte every 400 ms, past the 200 ms idle bound: the server closes for good, and a later
    // byte finds no one (EPIPE or reset) instead of being read forever.
    const failed = new Promise<Error>((resolve) => socket.once('error', resolve));
    const probe = setInterval(() => socket.write('a'), 400);
    const error = await failed;
    clearInterval(probe);
    socket.destroy();
    expect((error as NodeJS.ErrnoException).code).toMatch(/EPIPE|ECONNRESET/);
  });

  it('a client that keeps sending past the byte bound is cut off before its body ends', async () => {
    const socket = connect({ port: boundedPort, host: '127.0.0.1' });
    socket.on('data', () => {});
    await once(socket, 'connect');
    const failed = new Promise<Error>((resolve) => socket.once('error', resolve));
    socket.write(`POST /api/store HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${TWENTY_MB}\r\n\r\n`);
    // 256 kB at a time, with a pause between writes so the server reads as it comes: 20 MB
    // against a 1 MB bound, the server closes while the client still writes.
    let sent = 0;
    let error: Error | undefined;
    void failed.then((reason) => (error = reason));
    while (sent < TWENTY_MB && !error && !socket.destroyed) {
      await new Promise<void>((resolve) => socket.write(Buffer.alloc(256 * 1024, 'a'), () => resolve()));
      sent += 256 * 1024;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    socket.destroy();
    expect(sent, 'the whole body was accepted').toBeLessThan(TWENTY_MB);
  });
});
