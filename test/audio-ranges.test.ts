/**
 * Audio files answer byte ranges (issue 13, item 7): a player can seek, and iOS Safari,
 * which asks for a range before it plays, can play. Other files and the API ignore Range.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type BuiltApp } from '../devkit/app.ts';
import { createContractChecker, type ContractChecker } from './helpers/contract.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

const AUDIO = Buffer.from(Array.from({ length: 4096 }, (_, index) => (index * 7) % 256));
const URL_PATH = '/audio/harbour-talk.wav';

let built: BuiltApp;
let contract: ContractChecker;

/** superagent hands its parser the Node response stream. */
function binary(response: unknown, callback: (error: Error | null, body: Buffer) => void) {
  const stream = response as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => callback(null, Buffer.concat(chunks)));
}

async function get(url: string, headers: Record<string, string> = {}) {
  let pending = request(built.app).get(url).buffer(true).parse(binary);
  for (const [name, value] of Object.entries(headers)) pending = pending.set(name, value);
  const response = await pending;
  if (String(response.headers['content-type']).includes('json')) response.body = JSON.parse(String(response.body));
  contract.check('GET', url, response);
  return response;
}

beforeAll(async () => {
  const contentDir = writeFixtureContent();
  // The fixture's track, with bytes whose every slice is recognisable.
  writeFileSync(path.join(contentDir, 'audio/harbour-talk.wav'), AUDIO);
  built = await buildApp(contentDir);
  contract = await createContractChecker(built.app);
});

describe('byte ranges on /audio media', () => {
  it('the whole file says it accepts ranges', async () => {
    const response = await get(URL_PATH);
    expect(response.status).toBe(200);
    expect(response.headers['accept-ranges']).toBe('bytes');
    expect(Buffer.compare(response.body as Buffer, AUDIO)).toBe(0);
  });

  it.each([
    ['bytes=0-99', 0, 99],
    ['bytes=1000-', 1000, AUDIO.length - 1],
    ['bytes=-10', AUDIO.length - 10, AUDIO.length - 1],
    ['bytes=4000-99999', 4000, AUDIO.length - 1],
  ])('Range: %s answers 206 with exactly those bytes', async (range, first, last) => {
    const response = await get(URL_PATH, { Range: range });
    expect(response.status).toBe(206);
    expect(response.headers['content-range']).toBe(`bytes ${first}-${last}/${AUDIO.length}`);
    expect(response.headers['content-length']).toBe(String(last - first + 1));
    expect(Buffer.compare(response.body as Buffer, AUDIO.subarray(first, last + 1))).toBe(0);
  });

  it('HEAD with a Range answers 206 headers without a body', async () => {
    const response = await request(built.app).head(URL_PATH).set('Range', 'bytes=0-99');
    expect(response.status).toBe(206);
    expect(response.headers['content-range']).toBe(`bytes 0-99/${AUDIO.length}`);
    expect(response.headers['content-length']).toBe('100');
    expect(response.text ?? '').toBe('');
  });

  it('a range past the end is 416 RANGE_NOT_SATISFIABLE in the envelope, with the size in Content-Range', async () => {
    const response = await get(URL_PATH, { Range: `bytes=${AUDIO.length}-` });
    expect(response.status).toBe(416);
    expect(response.headers['content-range']).toBe(`bytes */${AUDIO.length}`);
    expect(response.body.error).toMatchObject({ code: 'RANGE_NOT_SATISFIABLE', retryable: false, suggested_next_call: { method: 'GET', path: URL_PATH } });
  });

  it('If-Range with a stale validator gets the whole file', async () => {
    const response = await get(URL_PATH, { Range: 'bytes=0-99', 'If-Range': '"stale"' });
    expect(response.status).toBe(200);
    expect((response.body as Buffer).length).toBe(AUDIO.length);
  });

  it('If-Range with the current ETag gets the range', async () => {
    const etag = String((await get(URL_PATH)).headers.etag);
    const response = await get(URL_PATH, { Range: 'bytes=0-99', 'If-Range': etag });
    expect(response.status).toBe(206);
  });

  it('a missing audio file is still 404 ROUTE_NOT_FOUND', async () => {
    const response = await get('/audio/nowhere.wav', { Range: 'bytes=0-9' });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('ROUTE_NOT_FOUND');
  });

  it('transcripts, the manifest, other files and the API still ignore Range', async () => {
    for (const url of ['/audio/harbour-talk.txt', '/audio/manifest.json', '/limitations.md', '/api/health']) {
      const response = await get(url, { Range: 'bytes=0-3' });
      expect(response.status, url).toBe(200);
      expect(response.headers['content-range'], url).toBeUndefined();
      expect(response.headers['accept-ranges'], url).not.toBe('bytes');
    }
  });
});
