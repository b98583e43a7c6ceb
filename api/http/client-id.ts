/**
 * Who is calling, for rate limits and play counts, without keeping addresses: the client
 * address is hashed with a per-deployment secret and only the hash is stored.
 */
import { createHmac } from 'node:crypto';
import type { Request } from 'express';

export function clientHash(request: Request, salt: string): string {
  const address = request.ip ?? request.socket.remoteAddress ?? 'unknown';
  return createHmac('sha256', salt).update(address).digest('hex').slice(0, 24);
}
