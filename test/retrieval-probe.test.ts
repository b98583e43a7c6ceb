/**
 * The build's probe through the real search: held-back sentences of a generated corpus, whose
 * works each speak of their own invented words, asked under every candidate setting.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCorpus } from '../api/load-artifacts.ts';
import { artifactPaths } from '../core/artifacts.ts';
import { DEFAULT_RELEVANCE_MODEL } from '../core/search/relevance.ts';
import type { RetrievalChoice } from '../core/search/retrieval-choice.ts';
import { tempDir, TEST_CACHE_DIR } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { fnv1a, seededRandom } from '../core/random.ts';
import { tuningOf } from '../core/search/retrieval-choice.ts';
import type { SearchChunk, SearchRecord } from '../core/search/types.ts';
import type { Embedder } from '../core/ports/embedder.ts';
import { createHashedEmbedder } from '../devkit/hashed-embedder.ts';
import { chooseForCorpus, probeKey, runRetrievalProbe, sampleCorpus, type ProbeCorpus } from '../scripts/lib/retrieval-probe.ts';

const DIMS = 64;

/** Vectors that carry nothing of the text's meaning: each text its own random direction. */
function meaninglessEmbedder(): Embedder & { calls: number } {
  const embedder = {
    id: 'test-meaningless',
    dims: DIMS,
    calls: 0,
    async embed(texts: readonly string[]) {
      embedder.calls++;
      return texts.map((text) => {
        const random = seededRandom(fnv1a(text));
        const vector = Float32Array.from({ length: DIMS }, () => random() - 0.5);
        const norm = Math.hypot(...vector);
        return vector.map((value) => value / norm);
      });
    },
  };
  return embedder;
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'ze', 'po', 'qu', 'fe'];

/** 160 works, each with three invented words of its own repeated across four sentences, and common words around them. */
function generatedCorpus(): { records: SearchRecord[]; chunks: SearchChunk[] } {
  const random = seededRandom(42);
  const word = () => Array.from({ length: 3 }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join('');
  const records: SearchRecord[] = [];
  const chunks: SearchChunk[] = [];
  for (let at = 0; at < 160; at++) {
    const own = [word(), word(), word()];
    const title = `Work ${at}`;
    records.push({
      id: `GEN-${at}`,
      kind: 'work',
      title,
      ring: 'curated',
      type: 'essay',
      layer: 'research',
      evidence: 'uncharacterized',
      contributors: ['generator'],
      date: '2026-01-01',
      excerpt: '',
      lineage: [],
    });
    const sentences = [
      `The ${own[0]} of the valley grows where the ${own[1]} meets the river.`,
      `Every spring the ${own[1]} and the ${own[2]} are counted by the villagers.`,
      `Some say the ${own[2]} keeps the ${own[0]} from the cold winds of the north.`,
      `Nobody has yet written down why the ${own[0]} and the ${own[2]} came together.`,
    ];
    chunks.push({ record: at, text: `${title}. ${sentences.join(' ')}` });
  }
  return { records, chunks };
}

async function probeCorpus(embedder: Embedder): Promise<ProbeCorpus> {
  const { records, chunks } = generatedCorpus();
  const vectors = new Float32Array(chunks.length * embedder.dims);
  (await embedder.embed(chunks.map((chunk) => chunk.text))).forEach((vector, at) => vectors.set(vector, at * embedder.dims));
  return { records, chunks, vectors, embedder };
}

describe('the retrieval probe', () => {
  it('weights vectors that know nothing of the corpus little, and says what each side finds alone', async () => {
    const embedder = meaninglessEmbedder();
    const corpus = await probeCorpus(embedder);
    const { choice, reused } = await chooseForCorpus(corpus, probeKey(embedder.id), undefined, () => {});
    expect(reused).toBe(false);
    expect(choice.source).toBe('probe');
    expect(choice.probe!.questions).toBe(160);
    expect(choice.vector_weight).toBeLessThanOrEqual(0.2);
    const alone = choice.probe!.candidates.find((candidate) => candidate.vector_weight === 1)!;
    const words = choice.probe!.candidates.find((candidate) => candidate.vector_weight === 0 && !candidate.feedback)!;
    expect(words.hits10).toBeGreaterThan(0.9);
    expect(alone.hits10).toBeLessThan(0.2);
    expect(choice.note).toMatch(/alone, words find \d+ % of them and vectors \d+ %/);
  });

  it('finds the work of a held-back sentence by what the work says around it', async () => {
    const embedder = createHashedEmbedder(DIMS);
    const corpus = await probeCorpus(embedder);
    const result = await runRetrievalProbe(corpus, [{ label: 'engine default', tuning: {} }], { count: 50 });
    expect(result.questions).toHaveLength(50);
    // The held-back sentence is gone from its passage: found through its work's own words only.
    for (const question of result.questions) expect(question.rest).not.toContain(question.question);
    expect(result.scores[0]!.hits10).toBeGreaterThan(0.9);
  });

  it('reuses the previous choice under the same embedder at about the same size, and probes again otherwise', async () => {
    const embedder = meaninglessEmbedder();
    const corpus = await probeCorpus(embedder);
    const key = probeKey(embedder.id);
    const first = await chooseForCorpus(corpus, key, undefined, () => {});
    expect(first.choice.probe!.corpus_passages).toBe(160);
    const calls = embedder.calls;
    // A few works more: the same kind of corpus, the same choice.
    const grown = { ...corpus, chunks: [...corpus.chunks, ...corpus.chunks.slice(0, 20)] };
    const again = await chooseForCorpus(grown, key, first.choice, () => {});
    expect(again).toMatchObject({ reused: true, choice: first.choice });
    expect(embedder.calls).toBe(calls);
    expect(probeKey('another-embedder')).not.toBe(key);
    const other = await chooseForCorpus(corpus, probeKey('another-embedder'), first.choice, () => {});
    expect(other.reused).toBe(false);
    expect(embedder.calls).toBeGreaterThan(calls);
  });

  it('samples a large corpus by whole works, each passage with its own vector', async () => {
    const embedder = meaninglessEmbedder();
    const corpus = await probeCorpus(embedder);
    const sample = sampleCorpus(corpus, 40);
    expect(sample.chunks.length).toBe(40);
    expect(sample.records.length).toBe(40);
    for (const [at, chunk] of sample.chunks.entries()) {
      const original = corpus.chunks.findIndex((candidate) => candidate.text === chunk.text);
      expect(sample.records[chunk.record]).toBe(corpus.records[corpus.chunks[original]!.record]);
      expect(Array.from(sample.vectors.subarray(at * DIMS, (at + 1) * DIMS))).toEqual(
        Array.from(corpus.vectors.subarray(original * DIMS, (original + 1) * DIMS)),
      );
    }
    expect(sampleCorpus(corpus, 1000)).toBe(corpus);
    // Few questions in the sample: the engine's default, said so.
    const { choice } = await chooseForCorpus(sampleCorpus(corpus, 40) as ProbeCorpus, 'k', undefined, () => {});
    expect(choice.source).toBe('default');
    expect(tuningOf(choice)).toEqual({ vectorWeight: 0.6 });
  });
});

describe("the question gate, from where the corpus's own questions sit on the relevance scale", () => {
  it('is set unless the content brought its own calibration', async () => {
    const embedder = meaninglessEmbedder();
    const corpus = await probeCorpus(embedder);
    const placed = await chooseForCorpus(corpus, 'k', undefined, () => {});
    expect(placed.choice.question_gate).not.toBeNull();
    expect(placed.choice.question_gate).toBeGreaterThanOrEqual(0);
    const own = await chooseForCorpus(corpus, 'k', undefined, () => {}, { ownFit: true });
    expect(own.choice.question_gate).toBeNull();
  });

  it('leaves the served floors as the calibration has them', async () => {
    const embedder = createHashedEmbedder();
    const artifactsDir = path.join(tempDir('probe-floor'), 'artifacts');
    await buildArtifacts({ contentDir: writeFixtureContent(), artifactsDir, cacheDir: TEST_CACHE_DIR, embedder });
    const paths = artifactPaths(artifactsDir);
    writeFileSync(paths.searchRelevance, JSON.stringify({ ...DEFAULT_RELEVANCE_MODEL, embedder: embedder.id }));
    const choice = JSON.parse(readFileSync(paths.searchRetrieval, 'utf8')) as RetrievalChoice;
    writeFileSync(paths.searchRetrieval, JSON.stringify({ ...choice, question_gate: 0.9 }));
    expect((await loadCorpus(artifactsDir, embedder)).search.relevance.floors).toEqual(DEFAULT_RELEVANCE_MODEL.floors);
  });
});
