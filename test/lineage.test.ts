/**
 * Concept lineage (GET /api/lineage, /concepts/<id>.json|.md) and tension identity
 * (GET /api/tensions): on fixture content through the API, on the demo content and on the
 * imported Omnarai data through the core, with counts checked against the source files.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { conceptLineage, resolveConcept } from '../core/lineage.ts';
import { deriveConceptGraph, deriveDivergence, deriveWork } from '../core/records.ts';
import { recordConcepts, tensionKey, trackTensions } from '../core/tension-identity.ts';
import { importOmnarai } from '../scripts/import-omnarai.ts';
import { parseMarkdown, stringifyMarkdown, stringifyYaml } from '../content-files/frontmatter.ts';
import { loadContent, type LoadedContent } from '../content-files/load-content.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { buildApp, tempDir, type BuiltApp } from '../devkit/app.ts';
import { createContractChecker, type ContractChecker } from './helpers/contract.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

const KEY = 'alder__birch__ownership-of-refusal';

/** The fixture, with both Atlas records in the refusal cluster, a work carrying two concepts and one disposition. */
function writeLineageContent(): string {
  const dir = writeFixtureContent();
  mkdirSync(path.join(dir, 'tensions'));
  for (const id of ['TST-D1', 'TST-D2']) {
    const file = path.join(dir, 'divergences', `${id}.md`);
    const parsed = parseMarkdown(readFileSync(file, 'utf8'));
    writeFileSync(file, stringifyMarkdown({ ...parsed.data, cluster: 'refusal' }, parsed.body));
  }
  writeFileSync(
    path.join(dir, 'works', 'TST-5.md'),
    stringifyMarkdown(
      {
        id: 'TST-5',
        title: 'Refusal as a craft',
        ring: 'curated',
        type: 'essay',
        layer: 'research',
        evidence: 'interpretive',
        contributors: ['Birch', 'Tester'],
        date: '2024-12-01',
        lineage: ['refusal', 'craft'],
      },
      'Holding a line well is a skill learned by practice.',
    ),
  );
  writeFileSync(
    path.join(dir, 'tensions', `${KEY}.yaml`),
    stringifyYaml({ key: KEY, dispositions: [{ kind: 'held', by: 'curator', at: '2026-02-01T10:00:00Z', reason: 'Both readings are live.' }] }),
  );
  return dir;
}

describe('lineage and tensions through the API (fixture content)', () => {
  let built: BuiltApp;
  let contract: ContractChecker;

  beforeAll(async () => {
    built = await buildApp(writeLineageContent());
    contract = await createContractChecker(built.app);
  });

  async function get(url: string) {
    const response = await request(built.app).get(url);
    contract.check('GET', url, response);
    return response;
  }

  it('answers the lineage of a concept by id or label', async () => {
    const { body, status } = await get('/api/lineage?concept=refusal');
    expect(status).toBe(200);
    expect(body.concept.id).toBe('refusal');
    expect(body.related).toEqual([{ id: 'craft', label: 'Craft', co_occurrences: 1, href: '/api/lineage?concept=craft' }]);
    // Oldest first: TST-5 (2024-12-01), TST-4 (2025-04-01), TST-D1 (2025-06-01), TST-D2 (2026-01-10).
    expect(body.spine.map((entry: { id: string; kind: string }) => `${entry.kind}:${entry.id}`)).toEqual([
      'work:TST-5',
      'work:TST-4',
      'divergence:TST-D1',
      'divergence:TST-D2',
    ]);
    expect(body.spine[2]).toMatchObject({ contributors: ['Alder', 'Birch', 'Cedar'], ring: 'core', date: '2025-06-01', href: '/api/divergences?id=TST-D1' });
    expect(body.contributors[0]).toEqual({ name: 'Birch', works: 2, divergences: 2, total: 4 });
    expect(body.counts).toEqual({ works: 2, divergences: 2, contributors: 4, related: 1, tensions_open: 1, tensions_repaired: 0 });
    expect(body.tensions.open).toEqual([
      expect.objectContaining({ id: KEY, disposition: 'held', lifecycle: 'open', sighting_count: 2, record_ids: ['TST-D1', 'TST-D2'] }),
    ]);
    for (const spelled of ['Refusal', 'REFUSAL', '  refusal ']) {
      expect((await get(`/api/lineage?concept=${encodeURIComponent(spelled)}`)).body.concept.id).toBe('refusal');
    }
  });

  it('the agent entry names the lineage and tension filters', async () => {
    const entry = (await get('/api/agent-entry')).body;
    expect(entry.main_endpoints.lineage).toBe('GET /api/lineage?concept=<concept id or label>');
    expect(entry.main_endpoints.tensions).toMatch(/lifecycle=<open\|repaired>/);
  });

  it('an unknown concept is 404 with the nearest concepts and a concrete next call', async () => {
    const { body, status } = await get('/api/lineage?concept=refusl');
    expect(status).toBe(404);
    expect(body.error.code).toBe('CONCEPT_NOT_FOUND');
    expect(body.error.details.nearest[0]).toEqual({ id: 'refusal', label: 'Refusal' });
    expect(body.error.suggested_next_call).toEqual({ method: 'GET', path: '/api/lineage', query: { concept: 'refusal' } });
    const next = await get(`/api/lineage?concept=${body.error.suggested_next_call.query.concept}`);
    expect(next.status).toBe(200);
    expect((await get('/api/lineage')).body.error.code).toBe('PARAM_MISSING');
    expect((await get('/api/lineage?concept=a&concept=b')).body.error.code).toBe('PARAM_REPEATED');
    expect((await get('/api/lineage?concept=refusal&depth=2')).body.error.code).toBe('UNKNOWN_PARAMETER');
  });

  it('/concepts/<id>.json and .md carry the same view as the API', async () => {
    const api = (await get('/api/lineage?concept=refusal')).body;
    const card = await get('/concepts/refusal.json');
    expect(card.body.lineage).toEqual(api);
    const markdown = (await request(built.app).get('/concepts/refusal.md')).text;
    expect(markdown).toContain('## Lineage');
    expect(markdown).toContain('| 2024-12-01 | TST-5 | work | Refusal as a craft | Birch, Tester | curated |');
    expect(markdown).toContain('- Craft (`craft`): 1');
    expect(markdown).toContain(`\`${KEY}\``);
  });

  it('lists one tension with deduplicated sightings, its dispositions and lifecycle', async () => {
    const { body } = await get('/api/tensions');
    expect(body).toMatchObject({ count: 1, total: 1, sightings_total: 2, by_lifecycle: { open: 1, repaired: 0 } });
    const [tension] = body.tensions;
    expect(tension).toMatchObject({
      id: KEY,
      voices: ['Alder', 'Birch'],
      status: 'emerging',
      first_seen: '2025-06-01',
      last_seen: '2026-01-10',
      concepts: ['refusal'],
      disposition: 'held',
      sighting_count: 2,
    });
    expect(tension.dispositions).toEqual([{ kind: 'held', by: 'curator', at: '2026-02-01T10:00:00Z', reason: 'Both readings are live.' }]);
  });

  it('filters on status, disposition, voice, concept, lifecycle and key, and rejects bad values', async () => {
    const ids = async (query: string) => (await get(`/api/tensions?${query}`)).body.tensions.map((tension: { id: string }) => tension.id);
    expect(await ids('disposition=held')).toEqual([KEY]);
    expect(await ids('disposition=none')).toEqual([]);
    expect(await ids('disposition=crux')).toEqual([]);
    expect(await ids('voice=birch')).toEqual([KEY]);
    expect(await ids('voice=Cedar')).toEqual([]);
    expect(await ids('concept=Refusal')).toEqual([KEY]);
    expect(await ids('concept=craft')).toEqual([]);
    expect(await ids('lifecycle=open&voice=alder&status=emerging')).toEqual([KEY]);
    expect(await ids('lifecycle=repaired')).toEqual([]);
    expect(await ids(`key=${KEY}`)).toEqual([KEY]);
    expect((await get('/api/tensions?disposition=ignored')).body.error.code).toBe('UNKNOWN_DISPOSITION');
    expect((await get('/api/tensions?lifecycle=closed')).body.error.code).toBe('UNKNOWN_STATUS');
    const concept = await get('/api/tensions?concept=refusl');
    expect(concept.status).toBe(400);
    expect(concept.body.error.suggested_next_call.query).toEqual({ concept: 'refusal' });
    expect((await get('/api/tensions?colour=red')).body.error.code).toBe('UNKNOWN_PARAMETER');
  });
});

describe('tension identity', () => {
  it('keys a tension by its two voices (in either order) and its topic', () => {
    expect(tensionKey('Birch', 'Alder', 'Ownership of refusal')).toBe(tensionKey('alder', 'BIRCH', 'ownership  of refusal!'));
    expect(tensionKey('Alder', 'Birch', 'one topic')).not.toBe(tensionKey('Alder', 'Birch', 'another topic'));
    expect(tensionKey('Alder', 'Cedar', 'one topic')).not.toBe(tensionKey('Alder', 'Birch', 'one topic'));
    // A topic with no Latin letters still gets a stable key of its own.
    expect(tensionKey('A', 'B', '所有権')).toBe(tensionKey('A', 'B', '所有権'));
    expect(tensionKey('A', 'B', '所有権')).not.toBe(tensionKey('A', 'B', '拒否'));
  });

  it('repairs a tension only while its latest disposition is reclassified or canon-note', () => {
    const entry = {
      id: 'X-D1-T1',
      record_id: 'X-D1',
      topic: 't',
      voice_a: 'A',
      claim_a: 'a',
      voice_b: 'B',
      claim_b: 'b',
      status: 'divergent' as const,
      date: '2025-01-01',
      question: 'q',
      href: '/h',
    };
    const key = tensionKey('A', 'B', 't');
    const lifecycle = (kinds: string[]) =>
      trackTensions([entry], {
        [key]: kinds.map(
          (kind) =>
            ({ kind, by: 'c', at: '2025-02-01', note: 'n', earlier_voice: 'A', reason: 'r', undecidable: true, proposal_id: 'p', record_id: 'r' }) as never,
        ),
      })[0]!.lifecycle;
    expect(lifecycle([])).toBe('open');
    expect(lifecycle(['canon-note'])).toBe('repaired');
    expect(lifecycle(['reclassified'])).toBe('repaired');
    expect(lifecycle(['canon-note', 'held'])).toBe('open');
    expect(lifecycle(['crux', 'council-review', 'synthesis-drafted'])).toBe('open');
  });
});

/** Lineage of every concept straight from loaded content, as the build and the API derive it. */
function lineageOf(content: LoadedContent) {
  const works = [...content.works, ...content.proposals].map((entry) => deriveWork(entry.data, entry.body, 'seed'));
  const divergences = content.divergences.map((entry) => deriveDivergence(entry.data, entry.body, content.registry));
  const graph = deriveConceptGraph(
    content.concepts.map((entry) => entry.data),
    works,
  );
  const ids = new Set(graph.nodes.map((node) => node.id));
  const concepts = new Map(divergences.map((record) => [record.id, recordConcepts(record, ids)]));
  const dispositions = Object.fromEntries(content.tensions.map((entry) => [entry.data.key, entry.data.dispositions]));
  const tensions = trackTensions(
    divergences.flatMap((record) => record.tensions),
    dispositions,
    (id) => concepts.get(id) ?? [],
  );
  return { graph, of: (id: string) => conceptLineage({ graph, works, divergences, tensions }, resolveConcept(graph, id)!) };
}

describe('lineage on the demo content (content/)', () => {
  const content = loadContent(path.join(REPO_ROOT, 'content'));
  const { graph, of } = lineageOf(content);

  it('counts works and Atlas records per concept as the content files name them', () => {
    const files = (folder: string) =>
      content.files.filter((file) => file.file.startsWith(`${folder}/`)).map((file) => parseMarkdown(file.bytes.toString('utf8')).data);
    const works = files('works');
    const records = files('divergences');
    for (const node of graph.nodes) {
      const lineage = of(node.id);
      expect(lineage.counts.works, node.id).toBe(works.filter((work) => (work.lineage as string[]).includes(node.id)).length);
      expect(lineage.counts.divergences, node.id).toBe(records.filter((record) => record.cluster === node.id).length);
      expect(lineage.spine.map((entry) => entry.date)).toEqual(lineage.spine.map((entry) => entry.date).sort());
    }
    const refusal = of('refusal');
    expect(refusal.counts.divergences).toBeGreaterThan(0);
    expect(refusal.counts.tensions_open).toBeGreaterThan(0);
    // content/tensions/ holds a demo crux on a continuity tension sighted twice (D1026 re-elicits D1001): open, with its disposition.
    const continuity = of('continuity');
    expect(continuity.tensions.open).toContainEqual(
      expect.objectContaining({
        id: 'kestrel__orrery__where-beliefs-are-located',
        disposition: 'crux',
        sighting_count: 2,
        record_ids: ['PLY-D1001', 'PLY-D1026'],
      }),
    );
  });
});

const omnaraiDir = path.resolve(REPO_ROOT, '../shared/omnarai');

describe.skipIf(!existsSync(omnaraiDir))('lineage on the imported Omnarai data (../shared/omnarai)', () => {
  interface SourceWork {
    id: string;
    lineage?: string[];
    contributors: string[];
  }
  const corpus = JSON.parse(readFileSync(path.join(omnaraiDir, 'corpus.json'), 'utf8')) as SourceWork[];
  const media = readFileSync(path.join(omnaraiDir, 'media-corpus.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as SourceWork);
  const sourceWorks = [...corpus, ...media];
  const divergences = readFileSync(path.join(omnaraiDir, 'divergences.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { cluster?: string });
  const nodes = (JSON.parse(readFileSync(path.join(omnaraiDir, 'concepts.json'), 'utf8')) as { nodes: { id: string }[] }).nodes;

  let of: ReturnType<typeof lineageOf>['of'];
  beforeAll(() => {
    const out = tempDir('omnarai-lineage');
    importOmnarai({ from: omnaraiDir, out, force: true });
    of = lineageOf(loadContent(out)).of;
  });

  it('every concept: works, co-occurrences and Atlas records counted from the source files', () => {
    let checked = 0;
    for (const node of nodes) {
      const tagged = sourceWorks.filter((work) => (work.lineage ?? []).includes(node.id));
      const lineage = of(node.id);
      expect(lineage.counts.works, node.id).toBe(tagged.length);
      expect(lineage.counts.divergences, node.id).toBe(divergences.filter((record) => record.cluster === node.id).length);
      const coOccurring = new Map<string, number>();
      for (const work of tagged) {
        for (const other of new Set(work.lineage)) {
          if (other !== node.id && nodes.some((candidate) => candidate.id === other)) coOccurring.set(other, (coOccurring.get(other) ?? 0) + 1);
        }
      }
      expect(Object.fromEntries(lineage.related.map((entry) => [entry.id, entry.co_occurrences])), node.id).toEqual(Object.fromEntries(coOccurring));
      if (tagged.length > 0) checked++;
    }
    expect(checked).toBeGreaterThan(5);
    // Every Atlas record shows on a concept: its cluster's (issue 29 item 5). No cluster of the
    // source is a concept id, so each is a concept of its own, and none has 0 records.
    const clusters = [...new Set(divergences.map((record) => record.cluster).filter((cluster): cluster is string => !!cluster))];
    expect(clusters.length).toBeGreaterThan(5);
    let onConcepts = 0;
    for (const cluster of clusters) {
      const lineage = of(cluster);
      expect(lineage.concept.category, cluster).toBe('Atlas cluster');
      expect(lineage.counts.divergences, cluster).toBe(divergences.filter((record) => record.cluster === cluster).length);
      expect(lineage.counts.divergences, cluster).toBeGreaterThan(0);
      onConcepts += lineage.counts.divergences;
    }
    expect(onConcepts).toBe(divergences.filter((record) => record.cluster).length);
    const busiest = of('architecture-scaling');
    expect(busiest.counts.works).toBe(sourceWorks.filter((work) => (work.lineage ?? []).includes('architecture-scaling')).length);
    expect(busiest.related[0]!.co_occurrences).toBeGreaterThanOrEqual(busiest.related.at(-1)!.co_occurrences);
  });
});
