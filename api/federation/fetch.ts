/**
 * Fetching a peer's documents without becoming a proxy into the operator's network: http(s)
 * only (redirects too, at most 3), addresses checked when the connection is made (so a DNS
 * answer that changes between check and connect does not pass), a timeout per request and a
 * byte ceiling read as the body streams in.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import { FederationError } from './errors.ts';

export interface FetchOptions {
  /** Allow loopback, private, link-local and other non-public addresses (FEDERATION_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  timeoutMs: number;
  maxRedirects?: number;
}

export interface Fetched {
  url: string;
  body: Buffer;
}

export type Fetcher = (url: string, maxBytes: number) => Promise<Fetched>;

const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** Whether an address is loopback, private, link-local, multicast or otherwise not a public host. */
export function isNonPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return NON_PUBLIC.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return NON_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

function refuseAddress(host: string, address: string): FederationError {
  return new FederationError(
    'ADDRESS_REFUSED',
    `${host} resolves to ${address}, a non-public address; set FEDERATION_ALLOW_PRIVATE=1 to fetch from private networks`,
  );
}

export function createFetcher(options: FetchOptions): Fetcher {
  const maxRedirects = options.maxRedirects ?? 3;
  const checkedLookup = (
    hostname: string,
    lookupOptions: object,
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = options.allowPrivate ? undefined : addresses.find((entry) => isNonPublicAddress(entry.address));
      if (refused) return callback(refuseAddress(hostname, refused.address), []);
      if ((lookupOptions as { all?: boolean }).all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };

  function once(url: URL, maxBytes: number): Promise<{ status: number; location?: string | undefined; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) && !options.allowPrivate && isNonPublicAddress(host)) {
        reject(refuseAddress(host, host));
        return;
      }
      const client = url.protocol === 'https:' ? https : http;
      const request = client.get(
        url,
        { lookup: checkedLookup as never, headers: { accept: 'application/json, text/markdown;q=0.9, */*;q=0.1' }, timeout: options.timeoutMs },
        (response) => {
          const status = response.statusCode ?? 0;
          if (status >= 300 && status < 400) {
            response.resume();
            resolve({ status, location: response.headers.location, body: Buffer.alloc(0) });
            return;
          }
          const declared = Number(response.headers['content-length'] ?? '0');
          if (declared > maxBytes) {
            request.destroy();
            reject(
              new FederationError(
                'LIMIT_EXCEEDED',
                `${url.href} is ${declared} bytes, more than the ${maxBytes} bytes left for this pull (FEDERATION_MAX_BYTES)`,
              ),
            );
            return;
          }
          const chunks: Buffer[] = [];
          let received = 0;
          response.on('data', (chunk: Buffer) => {
            received += chunk.length;
            if (received > maxBytes) {
              request.destroy();
              reject(new FederationError('LIMIT_EXCEEDED', `${url.href} sent more than the ${maxBytes} bytes left for this pull (FEDERATION_MAX_BYTES)`));
              return;
            }
            chunks.push(chunk);
          });
          response.on('end', () => resolve({ status, body: Buffer.concat(chunks) }));
          response.on('error', (error) => reject(new FederationError('UNREACHABLE', `${url.href}: ${error.message}`)));
        },
      );
      request.on('timeout', () =>
        request.destroy(new FederationError('UNREACHABLE', `${url.href} did not answer within ${options.timeoutMs} ms (FEDERATION_TIMEOUT_MS)`)),
      );
      request.on('error', (error) =>
        reject(error instanceof FederationError ? error : new FederationError('UNREACHABLE', `${url.href} is unreachable: ${error.message}`)),
      );
    });
  }

  return async (href, maxBytes) => {
    let url = parseHttpUrl(href);
    for (let redirects = 0; ; redirects++) {
      const answer = await once(url, maxBytes);
      if (answer.status >= 300 && answer.status < 400 && answer.location !== undefined) {
        if (redirects >= maxRedirects) throw new FederationError('REDIRECT_REFUSED', `${href} redirected more than ${maxRedirects} times`);
        const next = new URL(answer.location, url);
        if (next.protocol !== 'http:' && next.protocol !== 'https:') {
          throw new FederationError('REDIRECT_REFUSED', `${url.href} redirected to ${next.protocol} — only http and https are followed`);
        }
        url = next;
        continue;
      }
      if (answer.status !== 200) throw new FederationError('HTTP_STATUS', `${url.href} answered HTTP ${answer.status}`);
      return { url: url.href, body: answer.body };
    }
  };
}

export function parseHttpUrl(href: string): URL {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    throw new FederationError('INVALID_DOCUMENT', `${href} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FederationError('REDIRECT_REFUSED', `${href}: only http and https URLs are fetched`);
  if (url.username || url.password) throw new FederationError('INVALID_DOCUMENT', `${href}: URLs with credentials are refused`);
  return url;
}
