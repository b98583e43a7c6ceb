/**
 * The pull fetcher must not become a proxy into the operator's network: non-public addresses
 * refused unless configured, redirects only to http(s) and at most 3, a byte ceiling, a timeout.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FederationError } from '../api/federation/errors.ts';
import { createFetcher, isNonPublicAddress } from '../api/federation/fetch.ts';

let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const url = request.url ?? '/';
    if (url === '/ok') return void response.end('fine');
    if (url === '/to-file') return void response.writeHead(302, { location: 'file:///etc/passwd' }).end();
    if (url === '/to-gopher') return void response.writeHead(301, { location: 'gopher://example.org/' }).end();
    if (url.startsWith('/hop/')) {
      const n = Number(url.slice(5));
      return void response.writeHead(302, { location: n > 0 ? `/hop/${n - 1}` : '/ok' }).end();
    }
    if (url === '/big') return void response.end('x'.repeat(5000));
    if (url === '/stream') {
      response.write('x'.repeat(3000));
      return void response.end('y'.repeat(3000));
    }
    if (url === '/slow') return; // never answers
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.closeAllConnections?.() ?? server.close());

const open = createFetcher({ allowPrivate: true, timeoutMs: 300 });
const code = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (error: unknown) => (error instanceof FederationError ? error.code : String(error)),
  );

describe('the pull fetcher', () => {
  it('classifies loopback, private, link-local, mapped and unique-local addresses as non-public', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
    ]) {
      expect(isNonPublicAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isNonPublicAddress(address), address).toBe(false);
  });

  it('refuses loopback unless allowed, by literal address and by name', async () => {
    const strict = createFetcher({ allowPrivate: false, timeoutMs: 300 });
    expect(await code(strict(`${base}/ok`, 1000))).toBe('ADDRESS_REFUSED');
    expect(await code(strict(base.replace('127.0.0.1', 'localhost') + '/ok', 1000))).toBe('ADDRESS_REFUSED');
    expect((await open(`${base}/ok`, 1000)).body.toString()).toBe('fine');
  });

  it('follows at most 3 redirects, and only to http(s)', async () => {
    expect(await code(open(`${base}/to-file`, 1000))).toBe('REDIRECT_REFUSED');
    expect(await code(open(`${base}/to-gopher`, 1000))).toBe('REDIRECT_REFUSED');
    expect((await open(`${base}/hop/2`, 1000)).url).toBe(`${base}/ok`);
    expect(await code(open(`${base}/hop/3`, 1000))).toBe('REDIRECT_REFUSED');
    expect(await code(open('ftp://127.0.0.1/x', 1000))).toBe('REDIRECT_REFUSED');
  });

  it('stops at the byte ceiling, declared or streamed, and at the timeout', async () => {
    expect(await code(open(`${base}/big`, 4000))).toBe('LIMIT_EXCEEDED');
    expect(await code(open(`${base}/stream`, 4000))).toBe('LIMIT_EXCEEDED');
    expect((await open(`${base}/stream`, 6000)).body.length).toBe(6000);
    expect(await code(open(`${base}/slow`, 1000))).toBe('UNREACHABLE');
    expect(await code(open(`${base}/missing`, 1000))).toBe('HTTP_STATUS');
  });
});

describe('federation settings', () => {
  it('reads the limits from the environment and names a bad value', async () => {
    const { federationLimitsFromEnv } = await import('../api/federation/limits.ts');
    expect(federationLimitsFromEnv({})).toEqual({ maxRecords: 5000, maxBytes: 50_000_000, timeoutMs: 10_000, allowPrivate: false });
    expect(federationLimitsFromEnv({ FEDERATION_ALLOW_PRIVATE: '1', FEDERATION_MAX_RECORDS: '10' })).toMatchObject({ allowPrivate: true, maxRecords: 10 });
    expect(() => federationLimitsFromEnv({ FEDERATION_MAX_BYTES: 'lots' })).toThrow(/FEDERATION_MAX_BYTES/);
  });

  it('keeps the node key in a file named by configuration, created once, and the origin as an origin', async () => {
    const { loadConfig } = await import('../api/config.ts');
    expect(loadConfig({ FEDERATION_ORIGIN: 'https://atlas.example/some/path' }).federation.origin).toBe('https://atlas.example');
    expect(() => loadConfig({ FEDERATION_ORIGIN: 'not a url' })).toThrow(/FEDERATION_ORIGIN/);
    const { keyFromFile, keyFromSeed } = await import('../api/federation/keys.ts');
    const { mkdtempSync, statSync } = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'polyphony-key-')), 'node.pem');
    const first = keyFromFile(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(keyFromFile(file).publicKey).toBe(first.publicKey);
    expect(first.nodeId).toBe(`pn1:${first.keyId}`);
    expect(keyFromSeed('11'.repeat(32)).publicKey).toBe(keyFromSeed('11'.repeat(32)).publicKey);
    expect(() => keyFromSeed('11')).toThrow(/32 bytes/);
  });
});
