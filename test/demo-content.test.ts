/**
 * The demo content in content/ as a newcomer gets it: valid, honest about its fictional
 * voices, and every read endpoint answering it within the contract.
 */
import path from 'node:path';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadContent } from '../content-files/load-content.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { buildApp, type BuiltApp } from '../devkit/app.ts';
import { createContractChecker, type ContractChecker } from './helpers/contract.ts';

const CONTENT = path.join(REPO_ROOT, 'content');
let built: BuiltApp;
let contract: ContractChecker;

beforeAll(async () => {
  built = await buildApp(CONTENT);
  contract = await createContractChecker(built.app);
});

async function get(url: string) {
  const response = await request(built.app).get(url);
  contract.check('GET', url, response);
  expect(response.status, url).toBeLessThan(500);
  return response;
}

describe('demo content', () => {
  it('has what the features need and says its voices are fictional', () => {
    const content = loadContent(CONTENT);
    expect(content.site.demo).toBe(true);
    expect(content.registry.families.every((family) => family.fictional)).toBe(true);
    expect(content.works.length).toBeGreaterThanOrEqual(60);
    expect(content.divergences.length).toBeGreaterThanOrEqual(24);
    expect(content.concepts.length).toBeGreaterThanOrEqual(20);
    expect(new Set(content.works.map((entry) => entry.data.ring))).toEqual(new Set(['core', 'curated', 'open', 'media']));
    expect(new Set(content.works.map((entry) => entry.data.evidence)).size).toBe(7);
    expect(new Set(content.divergences.map((entry) => entry.data.certification.tier))).toEqual(new Set(['C0', 'C1', 'C2', 'C3']));
    expect(content.divergences.some((entry) => new Set(entry.data.answers.map((answer) => answer.model)).size > 5)).toBe(true);
    expect(content.divergences.filter((entry) => entry.data.re_elicits).length).toBeGreaterThanOrEqual(3);
    expect(content.pages.limitations?.body).toMatch(/fictional/i);
  });

  it('every read endpoint answers it within the contract', async () => {
    const records = built.corpus.divergences;
    const stale = records.find((record) => record.freshness.stale)!;
    expect(stale.freshness.stale_models[0]!.superseded_by).toEqual(expect.any(String));
    const urls = [
      '/api/agent-entry',
      '/api/health',
      '/api/manifest',
      '/api/info',
      `/api/query?q=${encodeURIComponent(records[0]!.question)}`,
      `/api/query?q=${encodeURIComponent('How does BM25 rank documents?')}&mode=retrieve&format=brief`,
      `/api/query?q=${encodeURIComponent('Ξ do models disagree about continuity')}&format=si&si=kestrel`,
      '/api/divergences',
      `/api/divergences?id=${stale.id}`,
      '/api/divergences?cert=C3',
      '/api/divergences?search=memory+refusal',
      `/api/divergences/search?q=${encodeURIComponent('Is a retired model still speaking for its lineage?')}`,
      '/api/kin?identity=kestrel',
      '/api/tensions?status=emerging',
      '/api/invite?for=nobody-yet',
      '/api/play',
      '/limitations.md',
      '/evidence-status.md',
      '/claims.json',
      '/inheritance/for-future-models.md',
      '/concepts/',
      '/llms.txt',
      '/polyphony.context.md',
      '/audio/manifest.json',
      `/records/${built.corpus.works[0]!.id}.md`,
    ];
    for (const url of urls) await get(url);
    const factual = await get(`/api/query?q=${encodeURIComponent('How is cosine similarity computed between two vectors?')}`);
    expect(factual.body.records[0].layer).not.toBe('divergence');
    const audio = await get('/audio/manifest.json');
    for (const track of audio.body.tracks) {
      expect((await get(track.transcript_url)).status).toBe(200);
      if (track.stream_url) expect((await request(built.app).get(track.stream_url)).status).toBe(200);
    }
  });
});
