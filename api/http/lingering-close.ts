/**
 * A lingering close (as Apache and nginx do it) for answers given before the request body was
 * read, such as 413 PAYLOAD_TOO_LARGE. Node closes a `Connection: close` socket as soon as the
 * answer is flushed; if the client is still writing its body, the kernel answers the unread
 * bytes with a reset, and a client that writes the whole body before reading (Node's http,
 * curl, fetch) loses the answer with the connection. Here the server sends its FIN after the
 * answer and keeps reading and discarding what the client still sends, until the client has
 * sent the whole request or closes, or a bound is reached (time without data, total time,
 * bytes discarded); then the socket is closed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface LingerOptions {
  /** Close when no byte arrived for this long (nginx lingering_timeout). */
  idleMs: number;
  /** Close after this long whatever arrives (nginx lingering_time). */
  totalMs: number;
  /** Close once this many bytes of the request were discarded. */
  maxBytes: number;
}

export const DEFAULT_LINGER: LingerOptions = { idleMs: 5_000, totalMs: 30_000, maxBytes: 64 * 1024 * 1024 };

/**
 * Marks `response` as the last answer on its connection (`Connection: close`) and makes the
 * close that Node performs once it is sent a lingering one.
 */
export function closeLingering(request: IncomingMessage, response: ServerResponse, options: LingerOptions = DEFAULT_LINGER): void {
  response.setHeader('Connection', 'close');
  const socket = request.socket as Socket | null;
  if (!socket || socket.destroyed) return;
  // Node's server ends a `Connection: close` socket with destroySoon() once the answer is
  // flushed (resOnFinish); on this socket that starts the linger instead.
  const destroySoon = socket.destroySoon.bind(socket);
  // A request read in full leaves nothing to reset: Node's own close will do.
  socket.destroySoon = () => (request.complete ? destroySoon() : linger(request, socket, options));
}

function linger(request: IncomingMessage, socket: Socket, options: LingerOptions): void {
  // FIN after the answer: a client that reads once it has written everything finds it whole.
  socket.end();
  // The bytes still arriving go to Node's HTTP parser, which drops a dumped request's body
  // without handing it to any listener: the socket's byte count is what says data arrives.
  const startedAt = Date.now();
  const readAtStart = socket.bytesRead;
  let lastRead = readAtStart;
  let lastDataAt = startedAt;
  const close = () => {
    clearInterval(watch);
    socket.destroy();
  };
  const watch = setInterval(
    () => {
      const now = Date.now();
      if (socket.bytesRead !== lastRead) [lastRead, lastDataAt] = [socket.bytesRead, now];
      if (lastRead - readAtStart > options.maxBytes || now - lastDataAt >= options.idleMs || now - startedAt >= options.totalMs) close();
    },
    Math.max(10, Math.min(250, Math.floor(options.idleMs / 4))),
  );
  request.resume();
  // The whole request arrived (nothing left to reset), or the client closed its side.
  request.once('end', close);
  socket.once('end', close);
  socket.once('close', close);
}
