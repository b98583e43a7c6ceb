/**
 * What operators, crawlers and agents expect of a public deployment (issue 13, items 9-10):
 * robots.txt, a sitemap whose every URL answers 200, /.well-known/llms.txt, discovery Link
 * headers, compression that leaves event streams, audio and byte ranges alone, one log line
 * with an error id per 500, per-client limits a client cannot escape by forging
 * X-Forwarded-For, and every rate limit configurable.
 */
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { loadConfig } from '../api/config.ts';
import { renderSitemap, renderSitemapIndex, SITEMAP_MAX_URLS, sitemapPageCount } from '../core/crawlers.ts';
import { chooseCoding, createCompression } from '../api/http/compression.ts';
import { buildApp, tempDir, type BuiltApp } from '../devkit/app.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

let built: BuiltApp;
let siteDir: string;

/** A small built site: pages at /, /atlas/, /atlas/TST-D1/ and one whose folder name needs encoding. */
function writeSite(): string {
  const dir = tempDir('ops-site');
  const page = (relative: string, title: string) => {
    mkdirSync(path.join(dir, relative), { recursive: true });
    writeFileSync(
      path.join(dir, relative, 'index.html'),
      `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1>${'<p>A paragraph of the page.</p>'.repeat(80)}</main></body></html>`,
    );
  };
  page('', 'Home');
  page('atlas', 'Atlas');
  page('atlas/TST-D1', 'TST-D1');
  page('works/a b&c', 'Encoded');
  return dir;
}

beforeAll(async () => {
  siteDir = writeSite();
  built = await buildApp(writeFixtureContent(), { siteDir });
});

const locs = (xml: string) => [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((match) => match[1]!.replaceAll('&amp;', '&'));

describe('robots.txt, sitemap.xml, llms.txt at its well-known address', () => {
  it('robots.txt keeps crawlers off /api/ but the entry document, and names the sitemap by an absolute URL', async () => {
    const response = await request(built.app).get('/robots.txt').set('Host', 'polyphony.test:8080').expect(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    expect(response.text).toMatch(/^User-agent: \*$/m);
    expect(response.text).toMatch(/^Disallow: \/api\/$/m);
    expect(response.text).toMatch(/^Allow: \/api\/agent-entry$/m);
    expect(response.text).toMatch(/^Sitemap: http:\/\/polyphony\.test:8080\/sitemap\.xml$/m);
    // Most specific rule first, for parsers that take the first match.
    expect(response.text.indexOf('Allow: /api/agent-entry')).toBeLessThan(response.text.indexOf('Disallow: /api/'));
    expect(response.text.indexOf('Disallow: /api/')).toBeLessThan(response.text.indexOf('Allow: /\n'));
  });

  it('PUBLIC_BASE_URL, when set, is the base of every absolute URL whatever the Host', async () => {
    const app = createApp({
      corpus: built.corpus,
      siteDir,
      log: () => {},
      publicBaseUrl: loadConfig({ PUBLIC_BASE_URL: 'https://polyphony.example/' }).publicBaseUrl!,
    });
    expect((await request(app).get('/robots.txt').set('Host', 'elsewhere.test').expect(200)).text).toContain(
      'Sitemap: https://polyphony.example/sitemap.xml\n',
    );
    const urls = locs((await request(app).get('/sitemap.xml').set('Host', 'elsewhere.test').expect(200)).text);
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls) expect(url.startsWith('https://polyphony.example/')).toBe(true);
  });

  it('the sitemap lists every site page and every record twin, and each URL answers 200 from the app', async () => {
    const response = await request(built.app).get('/sitemap.xml').set('Host', 'polyphony.test').expect(200);
    expect(response.headers['content-type']).toMatch(/^application\/xml/);
    expect(response.text).toContain('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');
    const paths = locs(response.text).map((url) => {
      expect(url.startsWith('http://polyphony.test/')).toBe(true);
      return url.slice('http://polyphony.test'.length);
    });
    expect(paths).toEqual(expect.arrayContaining(['/', '/atlas/', '/atlas/TST-D1/', '/works/a%20b%26c/']));
    for (const record of [...built.corpus.works, ...built.corpus.divergences]) {
      expect(paths).toContain(`/records/${record.id}.json`);
      expect(paths).toContain(`/records/${record.id}.md`);
    }
    for (const urlPath of paths) expect((await request(built.app).get(urlPath)).status, urlPath).toBe(200);
  });

  it('past 10,000 URLs the sitemap is an index of pages, each within the limit', () => {
    const paths = Array.from({ length: SITEMAP_MAX_URLS + 1 }, (_, index) => `/records/R-${index}.json`);
    expect(sitemapPageCount(paths.length)).toBe(2);
    expect(locs(renderSitemapIndex('https://x.test', 2))).toEqual(['https://x.test/sitemap.xml?page=1', 'https://x.test/sitemap.xml?page=2']);
    expect(locs(renderSitemap('https://x.test', paths, 1))).toHaveLength(SITEMAP_MAX_URLS);
    expect(locs(renderSitemap('https://x.test', paths, 2))).toEqual([`https://x.test/records/R-${SITEMAP_MAX_URLS}.json`]);
  });

  it('/.well-known/llms.txt is the same text as /llms.txt', async () => {
    const canonical = await request(built.app).get('/llms.txt').expect(200);
    const wellKnown = await request(built.app).get('/.well-known/llms.txt').expect(200);
    expect(wellKnown.headers['content-type']).toMatch(/^text\/plain/);
    expect(wellKnown.text).toBe(canonical.text);
  });
});

describe('discovery links', () => {
  it.each(['/', '/api/agent-entry'])('%s names the OpenAPI document (service-desc) and /llms.txt (describedby)', async (urlPath) => {
    for (const method of ['get', 'head'] as const) {
      const response = await request(built.app)[method](urlPath).expect(200);
      expect(response.headers.link).toMatch(/<\/openapi\.json>; rel="service-desc"/);
      expect(response.headers.link).toMatch(/<\/llms\.txt>; rel="describedby"/);
    }
    expect((await request(built.app).options(urlPath)).headers['access-control-expose-headers']).toContain('Link');
  });
});

describe('compression', () => {
  it.each([
    ['br', 'HTML', '/'],
    ['gzip', 'HTML', '/atlas/'],
    ['br', 'JSON', '/openapi.json'],
    ['gzip', 'JSON', '/api/agent-entry'],
    ['gzip', 'markdown', '/records/TST-D1.md'],
  ])('%s for %s (%s) when the client accepts it, with Vary: Accept-Encoding', async (encoding, _kind, urlPath) => {
    const plain = await request(built.app).get(urlPath).set('Accept-Encoding', 'identity').expect(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(Buffer.byteLength(plain.text)).toBeGreaterThan(1024);
    const response = await request(built.app).get(urlPath).set('Accept-Encoding', encoding).expect(200);
    expect(response.headers['content-encoding']).toBe(encoding);
    expect(response.headers.vary).toMatch(/Accept-Encoding/i);
    expect(response.text).toBe(plain.text);
  });

  it('the federation documents are computed per request: a conditional GET answers 200, never 304', async () => {
    for (const documentPath of [
      '/.well-known/polyphony-node.json',
      '/.well-known/polyphony-key-rotations.json',
      '/federation/manifest.json',
      '/federation/manifest.sig',
    ]) {
      for (const [header, value] of [
        ['If-None-Match', '*'],
        ['If-Modified-Since', new Date(Date.now() + 86_400_000).toUTCString()],
      ] as const) {
        const response = await request(built.app).get(documentPath).set(header, value);
        expect(response.status, `${documentPath} ${header}`).toBe(200);
        expect(response.body).toEqual(expect.any(Object));
      }
    }
  });

  it('a compressed file carries a weak ETag, and a conditional GET with it still answers 304', async () => {
    const response = await request(built.app).get('/records/TST-D1.md').set('Accept-Encoding', 'gzip').expect(200);
    expect(response.headers['content-encoding']).toBe('gzip');
    expect(response.headers.etag).toMatch(/^W\/"/);
    await request(built.app).get('/records/TST-D1.md').set('Accept-Encoding', 'gzip').set('If-None-Match', response.headers.etag!).expect(304);
  });

  it('an answer sent whole is compressed at once: its length given, no chunks, the same bytes, every coding', async () => {
    const plain = await request(built.app).get('/api/agent-entry').set('Accept-Encoding', 'identity').expect(200);
    for (const [accept, coding] of [
      ['gzip', 'gzip'],
      ['br', 'br'],
      ['deflate', 'deflate'],
      ['gzip, deflate, br', 'br'],
      ['gzip;q=1, br;q=0.5', 'gzip'],
      ['*', 'br'],
      ['br;q=0, *;q=0.3', 'gzip'],
    ] as const) {
      const response = await request(built.app).get('/api/agent-entry').set('Accept-Encoding', accept).expect(200);
      expect(response.headers['content-encoding'], accept).toBe(coding);
      expect(response.headers['transfer-encoding'], accept).toBeUndefined();
      expect(Number(response.headers['content-length']), accept).toBeLessThan(Buffer.byteLength(plain.text));
      expect(response.headers.vary).toMatch(/Accept-Encoding/i);
      expect(response.text, accept).toBe(plain.text);
    }
    // What no coding is acceptable for, and a HEAD, stay as they are.
    for (const accept of ['identity', 'gzip;q=0, br;q=0, deflate;q=0', 'gzip;q=0.2, identity;q=0.9']) {
      const response = await request(built.app).get('/api/agent-entry').set('Accept-Encoding', accept).expect(200);
      expect(response.headers['content-encoding'], accept).toBeUndefined();
      expect(response.text).toBe(plain.text);
    }
    const head = await request(built.app).head('/api/agent-entry').set('Accept-Encoding', 'gzip').expect(200);
    expect(head.headers['content-encoding']).toBeUndefined();
  });

  it('chooseCoding reads weights, wildcards and identity as RFC 9110 says, and leaves what it cannot read to the stream', () => {
    expect(chooseCoding(undefined)).toBeUndefined();
    expect(chooseCoding('')).toBeUndefined();
    expect(chooseCoding('gzip')).toBe('gzip');
    expect(chooseCoding('GZIP ; Q=0.5')).toBe('gzip');
    expect(chooseCoding('deflate, gzip')).toBe('gzip'); // ties: br, then gzip, then deflate
    expect(chooseCoding('deflate;q=1, gzip;q=0.9')).toBe('deflate');
    expect(chooseCoding('*;q=0')).toBeUndefined();
    expect(chooseCoding('identity, gzip;q=0.5')).toBeUndefined(); // identity weighs more
    expect(chooseCoding('compress, x-gzip')).toBeUndefined();
    expect(chooseCoding('gzip;q=2')).toBeUndefined(); // not a weight: the stream negotiates
    expect(chooseCoding('gzip;q=abc')).toBeUndefined();
  });

  describe('what is never compressed', () => {
    let server: Server;
    let base: string;
    beforeAll(async () => {
      const dir = tempDir('ops-compression');
      writeFileSync(path.join(dir, 'notes.txt'), 'line of text\n'.repeat(500));
      const app = express();
      app.use(createCompression());
      app.get('/events', (_request, response) => {
        response.setHeader('Content-Type', 'text/event-stream');
        response.setHeader('Cache-Control', 'no-cache');
        response.flushHeaders();
        response.write(`event: stage\ndata: ${JSON.stringify({ stage: 'first', padding: 'x'.repeat(2000) })}\n\n`);
        // The stream stays open: the client must get the first event now, not at the end.
      });
      app.get('/track.mp3', (_request, response) => {
        response.setHeader('Content-Type', 'audio/mpeg');
        response.send(Buffer.alloc(8192, 1));
      });
      app.use(express.static(dir));
      server = app.listen(0, '127.0.0.1');
      await once(server, 'listening');
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      return () => {
        server.closeAllConnections();
        server.close();
      };
    });

    it('an event stream: each event arrives when written, uncompressed', async () => {
      const controller = new AbortController();
      const response = await fetch(`${base}/events`, { headers: { 'Accept-Encoding': 'gzip, br' }, signal: controller.signal });
      expect(response.headers.get('content-encoding')).toBeNull();
      const reader = response.body!.getReader();
      let received = '';
      while (!received.includes('\n\n')) {
        const { value, done } = await reader.read();
        if (done) break;
        received += new TextDecoder().decode(value);
      }
      controller.abort();
      expect(received).toMatch(/^event: stage\ndata: \{"stage":"first"/);
    });

    it('audio', async () => {
      const response = await fetch(`${base}/track.mp3`, { headers: { 'Accept-Encoding': 'gzip, br' } });
      expect(response.headers.get('content-encoding')).toBeNull();
      expect((await response.arrayBuffer()).byteLength).toBe(8192);
    });

    it('a byte range: 206 with the bytes of the file as stored', async () => {
      const response = await fetch(`${base}/notes.txt`, { headers: { 'Accept-Encoding': 'gzip, br', Range: 'bytes=13-2612' } });
      expect(response.status).toBe(206);
      expect(response.headers.get('content-encoding')).toBeNull();
      expect(await response.text()).toBe('line of text\n'.repeat(200));
    });
  });
});

describe('an unexpected failure', () => {
  it('answers 500 with details.error_id and logs exactly one line carrying the same id, no stack', async () => {
    const lines: string[] = [];
    const broken = createApp({
      corpus: { ...built.corpus, search: { ...built.corpus.search, search: () => Promise.reject(new Error('index unreadable\n  at secret/path.ts:1:1')) } },
      log: (line) => lines.push(line),
    });
    const response = await request(broken).get('/api/query?q=tides').expect(500);
    expect(response.body.error.code).toBe('INTERNAL_ERROR');
    const errorId = response.body.error.details?.error_id as string;
    // The request's id (generated here: the request sent none), the one its log lines carry.
    expect(errorId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(response.headers['x-request-id']).toBe(errorId);
    expect(response.text).not.toContain('index unreadable');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('\n');
    expect(lines[0]).toContain(`error_id=${errorId}`);
    expect(lines[0]).toContain('GET /api/query');
    expect(lines[0]).toContain('index unreadable');
    // Two failures, two ids.
    const again = await request(broken).get('/api/query?q=tides').expect(500);
    expect(again.body.error.details.error_id).not.toBe(errorId);
  });
});

describe('per-client limits behind a proxy, every limit configurable', () => {
  it('with TRUST_PROXY=1 the client is the address the proxy saw: forged X-Forwarded-For entries change nothing', async () => {
    const config = loadConfig({ TRUST_PROXY: '1', PLAY_RATE_LIMIT: '2/3600' });
    expect(config.limits.play).toEqual({ limit: 2, windowMs: 3_600_000 });
    const app = createApp({ corpus: built.corpus, log: () => {}, trustProxy: config.trustProxy!, limits: config.limits });
    const play = (forwarded: string) => request(app).post('/api/play').set('X-Forwarded-For', forwarded).send({ slug: 'harbour-talk' });
    expect((await play('198.51.100.1, 203.0.113.7')).status).toBe(202);
    expect((await play('198.51.100.2, 203.0.113.7')).status).toBe(202);
    const third = await play('198.51.100.3, 203.0.113.7');
    expect(third.status).toBe(429);
    expect(third.body.error.code).toBe('RATE_LIMITED');
    // Another client behind the same proxy has its own window.
    expect((await play('203.0.113.8')).status).toBe(202);
  });

  it('the README documents TRUST_PROXY as a hop count or addresses, PUBLIC_BASE_URL and BODY_TIMEOUT_MS', () => {
    const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    expect(readme).toMatch(/`TRUST_PROXY`[^]*hop count[^]*addresses/);
    expect(readme).toContain('`PUBLIC_BASE_URL`');
    expect(readme).toContain('`BODY_TIMEOUT_MS`');
  });
});
