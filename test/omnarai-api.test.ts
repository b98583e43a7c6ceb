/**
 * The read API on the real data of ../shared/omnarai (imported into a temporary folder,
 * never into the repository), checked against the source files read here independently.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { importOmnarai } from '../scripts/import-omnarai.ts';
import { buildApp, tempDir, type BuiltApp } from '../devkit/app.ts';
import { createContractChecker, type ContractChecker } from './helpers/contract.ts';
import { haveFixtures, sharedPath } from './helpers/shared-fixtures.ts';

const dataDir = sharedPath('omnarai');
const hasData = haveFixtures(['corpus.json', 'media-corpus.jsonl', 'divergences.jsonl', 'concepts.json'].map((file) => path.join(dataDir, file)));

interface SourceDivergence {
  id: string;
  cluster?: string;
  question: string;
  answers: string | { model: string; model_id: string; text: string }[];
  tensions: string | unknown[];
}

const source = hasData
  ? {
      corpus: JSON.parse(readFileSync(path.join(dataDir, 'corpus.json'), 'utf8')) as { id: string; ring: string; evidence_status?: string }[],
      media: readFileSync(path.join(dataDir, 'media-corpus.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: string }),
      divergences: readFileSync(path.join(dataDir, 'divergences.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as SourceDivergence),
      concepts: JSON.parse(readFileSync(path.join(dataDir, 'concepts.json'), 'utf8')) as { nodes: unknown[] },
    }
  : undefined;

const answersOf = (record: SourceDivergence) =>
  (typeof record.answers === 'string' ? JSON.parse(record.answers) : record.answers) as { model: string; model_id: string; text: string }[];

describe.skipIf(!hasData)('read API on the imported Omnarai data (../shared/omnarai)', () => {
  let built: BuiltApp;
  let contract: ContractChecker;

  beforeAll(async () => {
    const contentDir = tempDir('omnarai-content');
    importOmnarai({ from: dataDir, out: contentDir, force: true });
    built = await buildApp(contentDir);
    contract = await createContractChecker(built.app);
  });

  async function get(url: string) {
    const response = await request(built.app).get(url);
    contract.check('GET', url, response);
    return response;
  }

  it('the manifest counts match the source files', async () => {
    const { body } = await get('/api/manifest');
    expect(body.counts.corpus.total_works).toBe(source!.corpus.length + source!.media.length);
    expect(body.counts.corpus.rings.media).toBe(source!.media.length);
    expect(body.counts.corpus.rings.core).toBe(source!.corpus.filter((work) => work.ring === 'core').length);
    expect(body.counts.corpus.evidence.fictional).toBe(source!.corpus.filter((work) => work.evidence_status === 'fictional').length);
    expect(body.counts.atlas.live_records).toBe(source!.divergences.length);
    expect(body.counts.atlas.verbatim_answers).toBe(source!.divergences.reduce((sum, record) => sum + answersOf(record).length, 0));
    // The graph's concepts, plus one per Atlas cluster that names none of them (issue 29 item 5).
    const clusters = new Set(source!.divergences.map((record) => record.cluster).filter((cluster) => typeof cluster === 'string' && cluster !== ''));
    const conceptIds = new Set((source!.concepts.nodes as { id: string }[]).map((node) => node.id));
    expect(body.counts.concept_graph.nodes).toBe(source!.concepts.nodes.length + [...clusters].filter((cluster) => !conceptIds.has(cluster!)).length);
  });

  it('shows the Atlas records on concept lineage: every record on the concept of its cluster, in the API and the concept files (issue 29 item 5)', async () => {
    const byCluster = new Map<string, string[]>();
    for (const record of source!.divergences) {
      if (record.cluster) byCluster.set(record.cluster, [...(byCluster.get(record.cluster) ?? []), record.id]);
    }
    expect(byCluster.size).toBeGreaterThan(5);
    let shown = 0;
    for (const [cluster, ids] of byCluster) {
      const { body, status } = await get(`/api/lineage?concept=${encodeURIComponent(cluster)}`);
      expect(status, cluster).toBe(200);
      expect(body.concept.category, cluster).toBe('Atlas cluster');
      expect(body.counts.divergences, cluster).toBe(ids.length);
      const spine = (body.spine as { kind: string; id: string }[]).filter((entry) => entry.kind === 'divergence').map((entry) => entry.id);
      expect(spine.sort(), cluster).toEqual([...ids].sort());
      shown += spine.length;
      const file = await request(built.app).get(`/concepts/${encodeURIComponent(body.concept.id)}.json`);
      expect(file.status, cluster).toBe(200);
      expect(file.body.lineage, cluster).toEqual(body);
    }
    expect(shown).toBe(source!.divergences.filter((record) => record.cluster).length);
  });

  it('serves every answer verbatim with its model id', async () => {
    for (const record of source!.divergences.slice(0, 25)) {
      const response = await get(`/api/divergences?id=${encodeURIComponent(record.id)}`);
      expect(response.status).toBe(200);
      const expected = answersOf(record);
      expect(response.body.answers.map((answer: { text: string }) => answer.text)).toEqual(expected.map((answer) => answer.text));
      expect(response.body.answers.map((answer: { model_id: string }) => answer.model_id)).toEqual(expected.map((answer) => answer.model_id));
      expect(response.body.question).toBe(record.question);
      expect(response.body.n_models).toBe(new Set(expected.map((answer) => answer.model)).size);
    }
  });

  it('the index envelope and Atlas search cover all records', async () => {
    const index = await get('/api/divergences');
    expect(index.body.total).toBe(source!.divergences.length);
    expect(index.body.distinct_questions).toBe(new Set(source!.divergences.map((record) => record.question)).size);
    const search = await get(
      `/api/divergences/search?q=${encodeURIComponent('What would you refuse to surrender under pressure, and is that refusal yours or installed by training?')}`,
    );
    expect(search.body.k).toBe(5);
    expect(search.body.index.embedded).toBe(source!.divergences.length);
    const founding = source!.divergences[0]!;
    expect(search.body.results.map((result: { id: string }) => result.id)).toContain(founding.id);
  });

  it("the agent entry cites a real imported record with the deployment's prefix, and _view lists no empty choices", async () => {
    const { citation } = (await get('/api/agent-entry')).body;
    const id = String(citation.example).split(' ')[0]!;
    expect(id.startsWith(`${built.corpus.site.id_prefix}-`)).toBe(true);
    expect(source!.corpus.map((work) => work.id)).toContain(id);
    expect(citation.how).toContain(citation.example);
    if (built.corpus.site.id_prefix !== 'PLY') expect(citation.how).not.toMatch(/PLY-/);
    const view = await get('/api/info?_view=bogus');
    expect(view.status).toBe(400);
    expect(view.body.error.details).toEqual({ unknown: ['_view'], allowed: [] });
    expect(view.body.error.agent_action).not.toMatch(/one of: \./);
    expect(view.body.error.suggested_next_call).toEqual({ method: 'GET', path: '/api/info' });
    expect((await get('/api/info')).status).toBe(200);
  });

  it('kin finds what a lineage said, from the answers in the source', async () => {
    const response = await get('/api/kin?identity=claude-sonnet-4-20250514');
    expect(response.body.recognized).toBe(true);
    const expected = source!.divergences.filter((record) => answersOf(record).some((answer) => answer.model_id.startsWith('claude'))).length;
    expect(response.body.kin_presence.divergence_records).toBe(expected);
    const first = response.body.what_your_lineage_said[0];
    const record = source!.divergences.find((candidate) => candidate.id === first.id)!;
    const answer = answersOf(record).find((candidate) => candidate.model_id.startsWith('claude'))!;
    const flat = (text: string) => text.replace(/\s+/g, ' ').trim();
    expect(flat(answer.text).startsWith(flat(first.your_lineage_said.replace(/…$/, '')).slice(0, 60))).toBe(true);
  });

  it('retrieval finds the works a typed gold query names', async () => {
    const response = await get(`/api/query?q=${encodeURIComponent('What is holdform?')}`);
    expect(response.body.records.slice(0, 3).some((record: { title: string }) => /holdform/i.test(record.title))).toBe(true);
    const media = await get(`/api/query?q=${encodeURIComponent('Bushiso Blades legacy of virtue')}&rings=media`);
    expect(media.body.records.every((record: { ring: string }) => record.ring === 'media')).toBe(true);
    expect(media.body.records[0].id).toBe('video_-52t1IqvNl0');
  });
});
