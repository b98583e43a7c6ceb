/**
 * Issue 26, item 3: an answer to HEAD carries no body, on every path, errors included, and
 * also the errors Node's parser raises before Express sees the request (a URL or headers past
 * its 16 kB head limit), which used to write the envelope after the head anyway; Node's own
 * client then failed with "Parse Error: Data after `Connection: close`".
 */
import { once } from 'node:events';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../api/http/http-server.ts';
import { buildApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { rawRequest } from './helpers/fuzz.ts';

let server: Server;
let port: number;
/** Every path of /openapi.json, templates filled with a value the fixture corpus has. */
let paths: string[];

beforeAll(async () => {
  const built = await buildApp(writeFixtureContent());
  const document = (await request(built.app).get('/openapi.json')).body as { paths: Record<string, unknown> };
  paths = Object.keys(document.paths).map((template) => template.replace(/\{[^}]+\}/g, 'TST-D1'));
  server = createHttpServer(built.app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

afterAll(() => {
  server?.closeAllConnections();
  server?.close();
});

/** How a HEAD request is made hostile: none, a URL past the app's 8192 bytes or past Node's 16 kB head, a header past it. */
const VARIANTS = {
  plain: { query: '', headers: '' },
  'URL of 10 kB (the app’s 414)': { query: `pad=${'a'.repeat(10_000)}`, headers: '' },
  'URL of 20 kB (the parser’s 414)': { query: `pad=${'a'.repeat(20_000)}`, headers: '' },
  'header of 9 kB (accepted)': { query: '', headers: `X-Pad: ${'a'.repeat(9_000)}\r\n` },
  'header of 20 kB (the parser’s 431)': { query: '', headers: `X-Pad: ${'a'.repeat(20_000)}\r\n` },
  'a header line without a colon (the parser’s 400)': { query: '', headers: 'garbage\r\n' },
} as const;

describe('HEAD answers carry no body', () => {
  it('the paths are the documented ones', () => {
    expect(paths.length).toBeGreaterThan(30);
    expect(paths).toContain('/sitemap.xml');
  });

  for (const [variant, { query, headers }] of Object.entries(VARIANTS)) {
    it(`every path, ${variant}: headers only, then the connection closes`, async () => {
      const problems: string[] = [];
      const statuses = new Set<number>();
      for (const path of paths) {
        const target = query ? `${path}${path.includes('?') ? '&' : '?'}${query}` : path;
        const payload = Buffer.from(`HEAD ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${headers}\r\n`, 'latin1');
        const response = await rawRequest(port, payload);
        statuses.add(response.status);
        if (response.status === 0) problems.push(`${path}: no answer (${response.error ?? 'closed'})`);
        else if (response.body.length > 0) problems.push(`${path}: ${response.status} with ${Buffer.byteLength(response.body)} bytes of body`);
      }
      expect(problems).toEqual([]);
      if (variant.includes('414')) expect([...statuses]).toEqual([414]);
      if (variant.includes('431')) expect([...statuses]).toEqual([431]);
      if (variant.includes('400')) expect([...statuses]).toEqual([400]);
    });
  }

  it('Node’s own client reads the issue’s case (HEAD /sitemap.xml with a 20 kB query) as a 414', async () => {
    const answer = await new Promise<{ status: number; length: string | undefined }>((resolve, reject) => {
      const outgoing = http.request({ host: '127.0.0.1', port, method: 'HEAD', path: `/sitemap.xml?q=${'a'.repeat(20_000)}` }, (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, length: response.headers['content-length'] }));
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
    expect(answer.status).toBe(414);
    // The length a GET would get, as HEAD allows.
    expect(Number(answer.length)).toBeGreaterThan(0);
  });
});
