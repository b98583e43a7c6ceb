/**
 * Calls the Express app in-process, over an in-memory socket pair: the app sees a real
 * HTTP/1.1 request (parsed by Node's own HTTP server), so every middleware, limit and
 * error path is the one HTTP clients get. No port is opened.
 *
 * Why not light-my-request: on an Express app it re-parents Express's shared request and
 * response prototypes, which breaks real HTTP requests served by the same process.
 */
import http from 'node:http';
import { Duplex } from 'node:stream';
import { parseBody, requestTarget, type AppRequest, type AppResponse, type CallApp } from './types.ts';

/** One end of an in-memory, full-duplex byte pipe; looks enough like a net.Socket for node:http. */
class PipeEnd extends Duplex {
  peer: PipeEnd | undefined;
  remoteAddress: string | undefined;
  remotePort = 0;
  remoteFamily: string | undefined;
  readonly encrypted = false;

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.peer?.push(chunk);
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.peer?.push(null);
    callback();
  }

  override _read(): void {}

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const peer = this.peer;
    this.peer = undefined;
    if (peer && !peer.destroyed) peer.destroy();
    callback(error);
  }

  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}

export interface InProcessOptions {
  /** Address the app sees as the client's (request.ip), so per-client rate limits hold. */
  remoteAddress?: string;
  /** Host header to send; the original request's host keeps links and logs consistent. */
  host?: string;
  /** Headers added to every call (e.g. User-Agent of the original client). */
  headers?: Record<string, string>;
}

export function createInProcessCall(handler: http.RequestListener, options: InProcessOptions = {}): CallApp {
  const server = http.createServer(handler);
  return (request: AppRequest, signal?: AbortSignal) => dispatch(server, request, options, signal);
}

function dispatch(server: http.Server, request: AppRequest, options: InProcessOptions, signal: AbortSignal | undefined): Promise<AppResponse> {
  const clientEnd = new PipeEnd();
  const serverEnd = new PipeEnd();
  clientEnd.peer = serverEnd;
  serverEnd.peer = clientEnd;
  serverEnd.remoteAddress = options.remoteAddress ?? '127.0.0.1';
  serverEnd.remoteFamily = serverEnd.remoteAddress.includes(':') ? 'IPv6' : 'IPv4';
  server.emit('connection', serverEnd);

  const payload = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body), 'utf8');
  const headers: Record<string, string> = {
    accept: 'application/json',
    host: options.host ?? 'localhost',
    ...options.headers,
    ...request.headers,
    ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
  };

  return new Promise<AppResponse>((resolve, reject) => {
    const outgoing = http.request(
      { method: request.method, path: requestTarget(request), headers, createConnection: () => clientEnd as never, ...(signal ? { signal } : {}) },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('error', reject);
        incoming.on('end', () => {
          clientEnd.destroy();
          const flat: Record<string, string> = {};
          for (const [name, value] of Object.entries(incoming.headers)) {
            if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
          }
          resolve({ status: incoming.statusCode ?? 500, headers: flat, body: parseBody(Buffer.concat(chunks).toString('utf8'), flat['content-type']) });
        });
      },
    );
    outgoing.on('error', (error) => {
      clientEnd.destroy();
      reject(error);
    });
    outgoing.end(payload);
  });
}
