/**
 * Every tier says where it came from (issue 28, item 4): measured here only when the evidence
 * log's written result backs the block, stated by the origin on a federated import, otherwise
 * stated in the content without evidence; the API's records and summaries and the manifest say so.
 */
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeTierSource, tierSource } from '../core/certify/tier-source.ts';
import { deriveDivergence } from '../core/records.ts';
import { loadContent } from '../content-files/load-content.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { buildApp, type BuiltApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import path from 'node:path';

const federation = { origin: 'https://a.example', origin_name: 'Node A' };

describe('tierSource', () => {
  it('measured only with an evidence log whose written result the build found', () => {
    expect(tierSource({ id: 'X-D1', evidence: 'X-D1.certification.jsonl', written: true })).toEqual({
      kind: 'measured',
      evidence_url: '/records/X-D1.certification.jsonl',
    });
    expect(tierSource({ id: 'X-D1', evidence: 'X-D1.certification.jsonl', written: false })).toEqual({ kind: 'content' });
    expect(tierSource({ id: 'X-D1', written: true })).toEqual({ kind: 'content' });
    expect(tierSource({ id: 'X-D1', written: false })).toEqual({ kind: 'content' });
  });

  it('an import states its origin, whatever its block says', () => {
    expect(tierSource({ id: 'A-D1', evidence: 'A-D1.certification.jsonl', written: true, provenance: { federation } })).toEqual({
      kind: 'origin',
      ...federation,
    });
    expect(describeTierSource({ kind: 'origin', ...federation })).toBe('stated by the origin, Node A (https://a.example); not measured here');
  });

  it("the demo Atlas's typed tiers are stated in the content, not measured", () => {
    const content = loadContent(path.join(REPO_ROOT, 'content'));
    const d1003 = content.divergences.find((entry) => entry.data.id === 'PLY-D1003')!;
    expect(d1003.data.certification.tier).toBe('C3');
    expect(deriveDivergence(d1003.data, d1003.body, content.registry).certification.tier_source).toEqual({ kind: 'content' });
  });
});

describe('on the API', () => {
  let built: BuiltApp;
  beforeAll(async () => {
    built = await buildApp(writeFixtureContent());
  });

  it('records, summaries and the manifest name the source of every tier', async () => {
    const record = (await request(built.app).get('/api/divergences?id=TST-D1').expect(200)).body;
    expect(record.certification).toMatchObject({ tier: 'C3', tier_source: { kind: 'content' } });
    const index = (await request(built.app).get('/api/divergences').expect(200)).body;
    for (const summary of index.records) expect(summary.certification.tier_source.kind).toBe('content');
    expect(index.tier_sources).toEqual({ measured: 0, origin: 0, content: index.total });
    const manifest = (await request(built.app).get('/api/manifest').expect(200)).body;
    expect(manifest.counts.atlas.tier_sources).toEqual(index.tier_sources);
  });
});
