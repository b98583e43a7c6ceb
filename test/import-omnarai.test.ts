/**
 * The Omnarai importer against the real data in ../shared/omnarai (CC BY-SA 4.0, never
 * copied into this repository; the import goes to a temporary folder), checked against the
 * source files parsed independently here, plus a small synthetic source for the quirks the
 * real files may not contain.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importOmnarai, type ImportSummary } from '../scripts/import-omnarai.ts';
import { parseMarkdown } from '../content-files/frontmatter.ts';
import { loadContent, type LoadedContent } from '../content-files/load-content.ts';
import { CONTENT_MEMO_FILE, openContentMemo } from '../content-files/content-memo.ts';
import { bodyText } from '../core/records.ts';
import { buildOmnaraiContent } from '../scripts/lib/omnarai.ts';
import { layerForType, splitContributors } from '../scripts/lib/omnarai/records.ts';
import { deriveRegistry } from '../scripts/lib/omnarai/registry.ts';
import type { OmnaraiSources } from '../scripts/lib/omnarai/sources.ts';
import { createDivergenceSchema } from '../schemas/content.ts';
import { haveFixtures, sharedPath } from './helpers/shared-fixtures.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = sharedPath('omnarai');
const hasData = haveFixtures(['corpus.json', 'media-corpus.jsonl', 'divergences.jsonl', 'concepts.json'].map((file) => path.join(dataDir, file)));
const cli = path.join(repoRoot, 'scripts/import-omnarai.ts');
const tsx = path.join(repoRoot, 'node_modules/tsx/dist/cli.mjs');

const tempDirs: string[] = [];
function tempDir(label: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `polyphony-omnarai-${label}-`));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

type Json = Record<string, unknown>;
interface SourceAnswer {
  model: string;
  model_id: string;
  lab: string;
  text: string;
}
interface SourceTension {
  topic: string;
  voice_a: string;
  claim_a: string;
  voice_b: string;
  claim_b: string;
  status: string;
}

/** The test's own reading of the source: JSON-string arrays decoded, nothing else changed. */
function decodeArray<T>(value: unknown): T[] {
  const decoded = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  if (!Array.isArray(decoded)) throw new Error(`expected an array, got ${typeof decoded}`);
  return decoded as T[];
}
const readJsonLines = (file: string): Json[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Json);
const byId = <T extends { data: { id: string } }>(entries: T[]) => new Map(entries.map((entry) => [entry.data.id, entry]));

function runCli(args: string[]) {
  return spawnSync(process.execPath, [tsx, cli, ...args], { cwd: repoRoot, encoding: 'utf8' });
}

describe.skipIf(!hasData)(hasData ? 'import of the real Omnarai data' : `import of the real Omnarai data (SKIPPED: ${dataDir} not found)`, () => {
  let out: string;
  let summary: ImportSummary;
  let content: LoadedContent;
  const corpus = hasData ? (JSON.parse(readFileSync(path.join(dataDir, 'corpus.json'), 'utf8')) as Json[]) : [];
  const media = hasData ? readJsonLines(path.join(dataDir, 'media-corpus.jsonl')) : [];
  const divergences = hasData ? readJsonLines(path.join(dataDir, 'divergences.jsonl')) : [];
  const graph = hasData
    ? (JSON.parse(readFileSync(path.join(dataDir, 'concepts.json'), 'utf8')) as { nodes: Json[]; edges: [string, string][] })
    : { nodes: [], edges: [] };

  beforeAll(() => {
    out = path.join(tempDir('real'), 'content');
    const started = performance.now();
    summary = importOmnarai({ from: dataDir, out });
    const imported = performance.now();
    content = loadContent(out);
    console.log(`omnarai import: ${Math.round(imported - started)} ms for ${summary.files} files; loadContent: ${Math.round(performance.now() - imported)} ms`);
  });

  it('writes a folder that loadContent accepts, rejecting nothing', () => {
    expect(summary.rejected).toEqual([]);
    expect(content.site).toMatchObject({ name: 'Omnarai (imported)', slug: 'omnarai', id_prefix: 'OMN', demo: false });
    expect(content.site.license).toEqual({ corpus: 'CC BY-SA 4.0', code: 'MIT' });
    expect(content.site.attribution).toMatch(/Realms of Omnarai/);
    expect(content.site.attribution).toMatch(/CC BY-SA 4\.0/);
    expect(Object.keys(content.pages).sort()).toEqual(['context', 'evidence-status', 'for-future-models', 'limitations']);
    expect(content.claims).toEqual([]);
    expect(content.audio).toEqual([]);
  });

  it("reads back through the build's content memo exactly what it reads without one (real answers, verbatim)", () => {
    const cache = tempDir('memo');
    const filling = openContentMemo(path.join(cache, CONTENT_MEMO_FILE));
    const first = loadContent(out, { memo: filling });
    filling.save();
    const memo = openContentMemo(path.join(cache, CONTENT_MEMO_FILE));
    const again = loadContent(out, { memo });
    // Every markdown file but the few pages (read on their own, not through the memo).
    const markdownFiles = content.files.filter((file) => file.file.endsWith('.md') && !file.file.startsWith('pages/')).length;
    expect(memo.stats).toEqual({ reused: markdownFiles, made: 0 });
    expect(again).toEqual(first);
    // Without the body text the memo adds to works, the same content as a load with no memo.
    const plain = (loaded: LoadedContent) => ({
      ...loaded,
      works: loaded.works.map(({ bodyText: _, ...entry }) => entry),
      proposals: loaded.proposals.map(({ bodyText: _, ...entry }) => entry),
    });
    expect(plain(again)).toEqual(content);
    for (const entry of again.works) expect(entry.bodyText).toEqual(bodyText(entry.body));
    expect(again.divergences.flatMap((entry) => entry.data.answers.map((answer) => answer.text))).toEqual(
      content.divergences.flatMap((entry) => entry.data.answers.map((answer) => answer.text)),
    );
  });

  it('writes every corpus work and media record under its exact source id', () => {
    expect(corpus).toHaveLength(309);
    expect(media).toHaveLength(253);
    const expected = [...corpus, ...media].map((record) => record.id as string).sort();
    expect(content.works.map((entry) => entry.data.id).sort()).toEqual(expected);
    expect(summary.works).toBe(309);
    expect(summary.media).toBe(253);
    for (const entry of content.works) expect(entry.file).toBe(`works/${entry.data.id}.md`);
    const ids = new Set(expected);
    expect(ids.has('OMN-001')).toBe(true);
    expect([...ids].some((id) => /^OMN-S\d+$/.test(id))).toBe(true);
    expect([...ids].some((id) => id.startsWith('video_-'))).toBe(true);
  });

  it('maps corpus fields: layer by type, evidence, split contributors, date, lineage, source_url, excerpt body', () => {
    const works = byId(content.works);
    const conceptIds = new Set(graph.nodes.map((node) => node.id as string));
    const layers: Record<string, string> = { lore: 'realms', research: 'research', technical: 'research', benchmark: 'research' };
    for (const source of corpus) {
      const entry = works.get(source.id as string);
      if (!entry) throw new Error(`missing ${String(source.id)}`);
      const { data } = entry;
      expect(data.title).toBe(source.title);
      expect(data.ring).toBe(source.ring);
      expect(data.type).toBe(source.type);
      expect(data.layer).toBe(layers[source.type as string] ?? 'canon');
      expect(data.evidence).toBe(source.evidence_status ?? 'uncharacterized');
      const names = (source.contributors as string[]).flatMap((name) => name.split('|').map((part) => part.trim()));
      expect(data.contributors).toEqual([...new Set(names)]);
      expect(data.date).toBe(source.date);
      expect(data.lineage).toEqual((source.lineage as string[]).filter((id) => conceptIds.has(id)));
      expect(data.source_url).toBe(source.permalink === '' ? undefined : source.permalink);
      expect(entry.body.trim()).toBe((source.excerpt as string).trim());
    }
  });

  it('splits "Claude | xz" into two contributors', () => {
    const joined = corpus.filter((source) => (source.contributors as string[]).includes('Claude | xz'));
    expect(joined.length).toBeGreaterThan(0);
    const works = byId(content.works);
    for (const source of joined) {
      const contributors = works.get(source.id as string)?.data.contributors ?? [];
      expect(contributors).toEqual(expect.arrayContaining(['Claude', 'xz']));
    }
    for (const entry of content.works) for (const name of entry.data.contributors) expect(name).not.toContain('|');
  });

  it('maps media records: ring, layer by tags, calendar date, video url, duration, transcript body', () => {
    const works = byId(content.works);
    for (const source of media) {
      const entry = works.get(source.id as string);
      if (!entry) throw new Error(`missing ${String(source.id)}`);
      expect(entry.data).toMatchObject({ ring: 'media', type: 'media', evidence: 'uncharacterized' });
      expect(entry.data.layer).toBe((source.tags as string[]).includes('lore') ? 'realms' : 'canon');
      expect(entry.data.date).toBe((source.published_at as string).slice(0, 10));
      expect(entry.data.source_url).toBe(source.video_url);
      expect(entry.data.media).toEqual({ url: source.video_url, duration_seconds: source.duration_seconds });
      expect(entry.body.trim()).toBe(((source.transcript as string) || (source.excerpt as string)).trim());
    }
  });

  it('writes 100 divergence records whose answer texts are byte-equal to the source', () => {
    expect(divergences).toHaveLength(100);
    expect(content.divergences).toHaveLength(100);
    const records = byId(content.divergences);
    let compared = 0;
    for (const source of divergences) {
      const entry = records.get(source.id as string);
      if (!entry) throw new Error(`missing ${String(source.id)}`);
      expect(entry.file).toBe(`divergences/${String(source.id)}.md`);
      expect(entry.data.question).toBe(source.question);
      expect(entry.data.date).toBe(source.date);
      expect(entry.data.certification).toEqual({ tier: 'C0' });
      expect(entry.data.provenance).toEqual({ source: 'omnarai divergences.jsonl' });
      const answers = decodeArray<SourceAnswer>(source.answers);
      expect(entry.data.answers).toHaveLength(answers.length);
      answers.forEach((answer, index) => {
        const written = entry.data.answers[index];
        expect(written?.model_id).toBe(answer.model_id);
        expect(written?.model).toBe(answer.model);
        expect(Buffer.from(written?.text ?? '', 'utf8').equals(Buffer.from(answer.text, 'utf8'))).toBe(true);
        compared += 1;
      });
      if (typeof source.divergence_score === 'number') expect(entry.data.divergence_score).toBe(source.divergence_score);
      else expect(entry.data.divergence_score).toBeUndefined();
      if (source.deliberation_card && typeof source.deliberation_card === 'object') expect(entry.data.deliberation_card).toEqual(source.deliberation_card);
      if (typeof source.synthesis === 'string') expect(entry.body.trim()).toBe(source.synthesis.trim());
    }
    expect(compared).toBe(500);
  });

  it('keeps every tension; voices change only where the summary reports it', () => {
    const records = byId(content.divergences);
    const changed = new Map(summary.normalized.map((change) => [`${change.id} ${change.field}`, change]));
    let total = 0;
    for (const source of divergences) {
      const tensions = decodeArray<SourceTension>(source.tensions);
      const written = records.get(source.id as string)?.data.tensions ?? [];
      expect(written).toHaveLength(Number(source.n_tensions));
      expect(written).toHaveLength(tensions.length);
      tensions.forEach((tension, index) => {
        const { voice_a: voiceA, voice_b: voiceB, ...rest } = written[index] ?? ({} as SourceTension);
        expect(rest).toEqual({ topic: tension.topic, claim_a: tension.claim_a, claim_b: tension.claim_b, status: tension.status });
        const expectVoice = (key: 'voice_a' | 'voice_b', actual: string | undefined) => {
          const change = changed.get(`${String(source.id)} tensions.${index}.${key}`);
          expect(actual).toBe(change ? change.to : tension[key]);
          if (change) expect(change.from).toBe(tension[key]);
        };
        expectVoice('voice_a', voiceA);
        expectVoice('voice_b', voiceB);
      });
      total += tensions.length;
    }
    expect(summary.tensions).toBe(total);
    // The two early records name "GPT-4o" in tensions while their OpenAI voice is "GPT" (gpt-5.5).
    for (const change of summary.normalized) expect(change).toMatchObject({ from: 'GPT-4o', to: 'GPT' });
  });

  it('derives one family per lab, named by the shortest label, with every model_id', () => {
    const openai = content.registry.families.find((family) => family.lab === 'OpenAI');
    expect(openai?.name).toBe('GPT');
    expect(openai?.aliases).toEqual(expect.arrayContaining(['gpt-4o', 'gpt-5.5']));
    expect(openai?.fictional).toBe(false);
    const answers = divergences.flatMap((source) => decodeArray<SourceAnswer>(source.answers));
    const labs = new Set(answers.map((answer) => answer.lab));
    expect(content.registry.families.map((family) => family.lab).sort()).toEqual([...labs].sort());
    const modelIds = [...new Set(answers.map((answer) => answer.model_id))].sort();
    expect(content.registry.models.map((model) => model.model_id).sort()).toEqual(modelIds);
    for (const model of content.registry.models) expect(model.retired).toBe(false);
    expect(content.registry.models.find((model) => model.model_id === 'gpt-4o')?.family).toBe('GPT');
    expect(content.registry.models.find((model) => model.model_id === 'gpt-5.5')?.family).toBe('GPT');
  });

  it('writes every concept node with related ids from the edges, once each, and a concept for each Atlas cluster that names none', () => {
    const nodeIds = new Set(graph.nodes.map((node) => node.id as string));
    const clusters = [...new Set(divergences.map((record) => record.cluster as string | undefined).filter((cluster): cluster is string => !!cluster))];
    const unnamed = clusters.filter((cluster) => !nodeIds.has(cluster));
    expect(content.concepts).toHaveLength(graph.nodes.length + unnamed.length);
    expect(summary.clusters.registered.sort()).toEqual([...unnamed].sort());
    const concepts = byId(content.concepts);
    for (const cluster of unnamed) {
      const size = divergences.filter((record) => record.cluster === cluster).length;
      expect(concepts.get(cluster)?.data, cluster).toMatchObject({ type: 'theme', category: 'Atlas cluster', weight: size, ring: 'core' });
    }
    // Each record is written with its cluster as a concept id.
    for (const entry of content.divergences) {
      if (entry.data.cluster !== undefined) expect(concepts.has(entry.data.cluster), entry.data.id).toBe(true);
    }
    for (const node of graph.nodes) {
      const entry = concepts.get(node.id as string);
      expect(entry?.data).toMatchObject({ label: node.label, ring: node.ring, type: node.type, weight: node.weight });
      const related = [...new Set(graph.edges.filter(([from]) => from === node.id).map(([, to]) => to))];
      expect(entry?.data.related).toEqual(related);
      expect(entry?.body.trim()).toBe(((node.definition as string | undefined) ?? (node.label as string)).trim());
    }
  });

  it('the CLI refuses a non-empty --out and leaves it untouched', () => {
    const dir = tempDir('busy');
    writeFileSync(path.join(dir, 'keep.txt'), 'mine');
    const result = runCli(['--from', dataDir, '--out', dir]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/is not empty/);
    expect(readdirSync(dir)).toEqual(['keep.txt']);
  });

  it('refuses an --out inside the tracked repository tree', () => {
    const inside = path.join(repoRoot, 'content', 'omnarai-import-must-not-exist');
    expect(() => importOmnarai({ from: dataDir, out: inside })).toThrow(/inside the repository/);
    expect(existsSync(inside)).toBe(false);
  });
});

const TRICKY_TEXT =
  '  leading spaces, "quotes", \'single\', back\\slash, tab\there, key: value, # not a comment\r\n' +
  '---\n' +
  'a line that looks like frontmatter\n' +
  'trailing spaces   \n\n\n' +
  'emoji 🜂, Ξ₀†, zero\u200Bwidth, bell\u0007, nbsp\u00A0\n\n';

function syntheticSources(): OmnaraiSources {
  const answers = [
    { model: 'Alpha', lab: 'Lab A', model_id: 'alpha-1', date: '2026-01-02T03:04:05.678Z', text: TRICKY_TEXT },
    { model: 'Alpha-Max', lab: 'Lab A', model_id: 'alpha-2', date: '2026-01-02', text: '|\n  block scalar lookalike' },
    { model: 'Beta', lab: 'Lab B', model_id: 'beta-7', date: '2026-01-02', text: 'Plain answer.' },
  ];
  const tensions = [{ topic: 't', voice_a: 'Alpha', claim_a: 'yes', voice_b: 'Beta', claim_b: 'no', status: 'divergent' }];
  const corpus = [
    {
      id: 'OMN-900',
      title: 'Joint work',
      ring: 'curated',
      type: 'technical',
      contributors: ['Claude | xz', 'xz'],
      lineage: ['alpha-theme', 'no-such-concept'],
      excerpt: 'Excerpt.',
      date: '2025-01-31',
      permalink: 'not a url',
      evidence_status: 'unknown',
    },
    {
      id: 'OMN-S17',
      title: 'Synthesis',
      ring: 'open',
      type: 'synthesis',
      contributors: ['Omnai'],
      lineage: [],
      excerpt: '# S',
      date: '2025-02-01',
      permalink: '',
    },
    { id: 'BAD-1', title: 'Wrong id shape', ring: 'core', type: 'lore', contributors: ['xz'], lineage: [], excerpt: 'x', date: '2025-02-01' },
  ];
  const mediaLines = [
    JSON.stringify({
      id: 'video_Ab-9_z',
      title: 'A video',
      ring: 'media',
      contributors: ['Omnai', 'xz'],
      lineage: ['beta-theme', 'lore'],
      excerpt: 'Short description.',
      video_url: 'https://example.org/watch?v=Ab-9_z',
      duration_seconds: 61,
      published_at: '2026-05-01T23:59:59Z',
      tags: ['memory'],
      transcript: '',
    }),
    '{ not json',
  ];
  const divergenceLines = [
    // The quirk under test: answers and tensions (and the card) JSON-encoded as strings.
    JSON.stringify({
      id: 'OMN-D1',
      date: '2026-01-02',
      cluster: 'c',
      question: 'Q?',
      method: 'm',
      n_tensions: 1,
      divergence_score: 0.5,
      deliberation_card: JSON.stringify({ note: 'card' }),
      synthesis: '## Shared ground\n\nText.',
      answers: JSON.stringify(answers),
      tensions: JSON.stringify(tensions),
    }),
    JSON.stringify({
      id: 'OMN-D2',
      date: '2026-01-03',
      question: 'Q2?',
      method: 'm',
      divergence_score: null,
      deliberation_card: null,
      synthesis: null,
      answers: [answers[1], answers[2]],
      // "alpha-1" names Lab A's family, whose only voice in this record is Alpha-Max.
      tensions: [{ ...tensions[0], voice_a: 'alpha-1' }],
    }),
    JSON.stringify({ id: 'OMN-D3', date: '2026-01-04', question: 'Q3?', method: 'm', answers: [answers[2]], tensions: [] }),
  ];
  const concepts = {
    nodes: [
      { id: 'alpha-theme', label: 'Alpha theme', ring: 'core', type: 'theme', weight: 3 },
      { id: 'beta-theme', label: 'Beta', ring: 'open', type: 'glossary', weight: 1, definition: 'A definition.', category: 'Cat' },
    ],
    edges: [
      ['alpha-theme', 'beta-theme'],
      ['alpha-theme', 'beta-theme'],
      ['beta-theme', 'ghost'],
    ],
  };
  return {
    corpus: JSON.stringify(corpus),
    media: `${mediaLines.join('\n')}\n`,
    divergences: `${divergenceLines.join('\n')}\n`,
    concepts: JSON.stringify(concepts),
  };
}

function writeSources(dir: string, sources: OmnaraiSources): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'corpus.json'), sources.corpus);
  writeFileSync(path.join(dir, 'media-corpus.jsonl'), sources.media);
  writeFileSync(path.join(dir, 'divergences.jsonl'), sources.divergences);
  writeFileSync(path.join(dir, 'concepts.json'), sources.concepts);
}

describe('import of a synthetic source with the quirks', () => {
  let from: string;
  let out: string;
  let summary: ImportSummary;
  let content: LoadedContent;

  beforeAll(() => {
    const root = tempDir('synthetic');
    from = path.join(root, 'source');
    out = path.join(root, 'content');
    writeSources(from, syntheticSources());
    summary = importOmnarai({ from, out });
    content = loadContent(out);
  });

  it('decodes JSON-string answers and tensions and keeps answer text byte for byte', () => {
    const record = byId(content.divergences).get('OMN-D1');
    expect(record?.data.answers.map((answer) => answer.text)).toEqual([TRICKY_TEXT, '|\n  block scalar lookalike', 'Plain answer.']);
    expect(record?.data.tensions).toHaveLength(1);
    expect(record?.data.deliberation_card).toEqual({ note: 'card' });
    expect(record?.data.divergence_score).toBe(0.5);
    expect(record?.body).toBe('## Shared ground\n\nText.\n');
    const other = byId(content.divergences).get('OMN-D2');
    expect(other?.data.divergence_score).toBeUndefined();
    expect(other?.data.deliberation_card).toBeUndefined();
    expect(other?.body).toBe('');
  });

  it('points a tension voice that did not answer at the one voice of its family, and says so', () => {
    expect(byId(content.divergences).get('OMN-D2')?.data.tensions[0]?.voice_a).toBe('Alpha-Max');
    expect(summary.normalized).toEqual([expect.objectContaining({ id: 'OMN-D2', field: 'tensions.0.voice_a', from: 'alpha-1', to: 'Alpha-Max' })]);
  });

  it('reports rejected records with their reasons and writes the rest', () => {
    expect(summary.rejected).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ source: 'corpus.json', id: 'BAD-1', reason: expect.stringMatching(/^id: must match/) }),
        expect.objectContaining({ source: 'media-corpus.jsonl', line: 2, reason: expect.stringMatching(/not valid JSON/) }),
        expect.objectContaining({ source: 'divergences.jsonl', id: 'OMN-D3', reason: expect.stringMatching(/at least two answers/) }),
      ]),
    );
    expect(summary.rejected).toHaveLength(3);
    expect(content.works.map((entry) => entry.data.id).sort()).toEqual(['OMN-900', 'OMN-S17', 'video_Ab-9_z']);
    expect(content.divergences.map((entry) => entry.data.id).sort()).toEqual(['OMN-D1', 'OMN-D2']);
  });

  it('maps work fields and drops what does not resolve', () => {
    const works = byId(content.works);
    expect(works.get('OMN-900')?.data).toMatchObject({
      contributors: ['Claude', 'xz'],
      evidence: 'uncharacterized',
      layer: 'research',
      lineage: ['alpha-theme'],
    });
    expect(works.get('OMN-900')?.data.source_url).toBeUndefined();
    expect(works.get('OMN-S17')?.data.layer).toBe('canon');
    expect(works.get('video_Ab-9_z')?.data).toMatchObject({ layer: 'canon', date: '2026-05-01', lineage: ['beta-theme'] });
    expect(works.get('video_Ab-9_z')?.body).toBe('Short description.\n');
    expect(summary.lineageDropped).toEqual({ references: 2, ids: ['lore', 'no-such-concept'] });
    const concepts = byId(content.concepts);
    expect(concepts.get('alpha-theme')?.data.related).toEqual(['beta-theme']);
    expect(concepts.get('beta-theme')?.data.related).toEqual([]);
    expect(summary.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/edge \["beta-theme","ghost"\]/)]));
  });

  it('derives the registry and marks versions retired only when asked', () => {
    const family = content.registry.families.find((candidate) => candidate.lab === 'Lab A');
    expect(family).toMatchObject({ name: 'Alpha', aliases: ['alpha', 'alpha-1', 'alpha-2', 'alpha-max'], fictional: false });
    const retiredOut = path.join(tempDir('retire'), 'content');
    importOmnarai({ from, out: retiredOut, retire: [{ model_id: 'alpha-1', superseded_by: 'alpha-2' }] });
    const retired = loadContent(retiredOut).registry.models.find((model) => model.model_id === 'alpha-1');
    expect(retired).toMatchObject({ retired: true, superseded_by: 'alpha-2' });
    expect(() => deriveRegistry([{ model: 'A', model_id: 'a-1' }], [{ model_id: 'zz' }])).toThrow(/no answer uses/);
  });

  it('--force replaces an earlier import; without it the folder is refused', () => {
    expect(() => importOmnarai({ from, out })).toThrow(/not empty/);
    const again = importOmnarai({ from, out, force: true });
    expect(again.files).toBe(summary.files);
    expect(() => loadContent(out)).not.toThrow();
  });
});

describe('importer rules', () => {
  it('splits contributor strings and keeps each name once', () => {
    expect(splitContributors(['Claude | xz', 'xz', ' Omnai '])).toEqual(['Claude', 'xz', 'Omnai']);
    expect(splitContributors('A|B')).toEqual(['A', 'B']);
  });

  it('maps types to layers', () => {
    expect(['lore', 'research', 'technical', 'benchmark', 'philosophy', 'synthesis', 'media', 'other'].map(layerForType)).toEqual([
      'realms',
      'research',
      'research',
      'research',
      'canon',
      'canon',
      'canon',
      'canon',
    ]);
  });

  it('writes a cluster as the concept it names (id, or label as a slug), and registers any other as an Atlas cluster concept (issue 29 item 5)', () => {
    const base = syntheticSources();
    const record = (id: string, cluster: string) => ({
      id,
      date: '2026-01-02',
      question: `Question ${id}?`,
      cluster,
      method: 'm',
      answers: [
        { model: 'Alpha', lab: 'Lab A', model_id: 'alpha-1', date: '2026-01-02', text: 'one' },
        { model: 'Beta', lab: 'Lab B', model_id: 'beta-7', date: '2026-01-02', text: 'other' },
      ],
      tensions: [],
    });
    const lines = [
      record('OMN-D1', 'alpha-theme'),
      record('OMN-D2', 'Beta  Theme'),
      record('OMN-D3', 'values-in-tension'),
      record('OMN-D4', 'values-in-tension'),
    ];
    const { files, report } = buildOmnaraiContent({ ...base, divergences: lines.map((line) => JSON.stringify(line)).join('\n') });
    const clusterOf = (id: string) => parseMarkdown(files.get(`divergences/${id}.md`)!).data.cluster;
    expect([clusterOf('OMN-D1'), clusterOf('OMN-D2'), clusterOf('OMN-D3'), clusterOf('OMN-D4')]).toEqual([
      'alpha-theme',
      'beta-theme',
      'values-in-tension',
      'values-in-tension',
    ]);
    expect(report.clusters).toEqual({ mapped: { 'Beta  Theme': 'beta-theme' }, registered: ['values-in-tension'] });
    expect(parseMarkdown(files.get('concepts/values-in-tension.md')!).data).toMatchObject({
      id: 'values-in-tension',
      label: 'Values in tension',
      type: 'theme',
      category: 'Atlas cluster',
      weight: 2,
    });
    expect(files.has('concepts/alpha-theme.md') && !files.has('concepts/beta-theme-2.md')).toBe(true);
  });

  it('keeps any answer text byte for byte through the written file', () => {
    const base = syntheticSources();
    const schema = createDivergenceSchema('OMN');
    const wellFormed = (text: string) => Buffer.from(text, 'utf8').toString('utf8') === text;
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 1 }).filter(wellFormed), (text) => {
        const record = {
          id: 'OMN-D5',
          date: '2026-01-02',
          question: 'Q?',
          method: 'm',
          answers: [
            { model: 'Alpha', lab: 'Lab A', model_id: 'alpha-1', date: '2026-01-02', text },
            { model: 'Beta', lab: 'Lab B', model_id: 'beta-7', date: '2026-01-02', text: 'other' },
          ],
          tensions: [],
        };
        const { files } = buildOmnaraiContent({ ...base, divergences: JSON.stringify(record) });
        const written = files.get('divergences/OMN-D5.md');
        if (written === undefined) throw new Error('record was not written');
        const parsed = schema.parse(parseMarkdown(written).data);
        expect(parsed.answers[0]?.text).toBe(text);
      }),
      { numRuns: 300 },
    );
  });
});
