import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Manifest } from '../core/build-manifest.ts';
import { canonicalJson } from '../core/canonical-json.ts';
import { manifestHash, type ManifestCounts } from '../core/manifest.ts';
import type { DivergenceFull } from '../core/records.ts';
import type { Embedder } from '../providers/embedder.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { artifactPaths } from '../core/artifacts.ts';
import { parseMarkdown, stringifyMarkdown } from '../content-files/frontmatter.ts';
import { ContentError } from '../content-files/issues.ts';
import { loadContent } from '../content-files/load-content.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { tempDir, testEmbedder, TEST_CACHE_DIR } from '../devkit/app.ts';

function editFrontmatter(file: string, edit: (data: Record<string, unknown>) => void): void {
  const parsed = parseMarkdown(readFileSync(file, 'utf8'));
  edit(parsed.data);
  writeFileSync(file, stringifyMarkdown(parsed.data, parsed.body));
}

function problemsOf(contentDir: string): string {
  try {
    loadContent(contentDir);
  } catch (error) {
    if (error instanceof ContentError) return error.message;
    throw error;
  }
  throw new Error('content was expected to be invalid');
}

describe('content validation names file, field and allowed values', () => {
  it('accepts the fixture', () => {
    expect(() => loadContent(writeFixtureContent())).not.toThrow();
  });

  it('rejects an unknown ring, layer and evidence with the allowed values', () => {
    const dir = writeFixtureContent();
    editFrontmatter(path.join(dir, 'works/TST-1.md'), (data) => {
      data.ring = 'central';
      data.layer = 'divergence';
      data.evidence = 'proven';
    });
    const message = problemsOf(dir);
    expect(message).toContain('works/TST-1.md: ring:');
    expect(message).toMatch(/ring:.*"core", "curated", "open", "media"/);
    expect(message).toMatch(/layer:.*"research", "canon", "realms"/);
    expect(message).toMatch(/evidence:.*"empirical"/);
  });

  it('rejects duplicate ids, bad dates and id shapes', () => {
    const dir = writeFixtureContent();
    editFrontmatter(path.join(dir, 'works/TST-2.md'), (data) => {
      data.id = 'TST-1';
      data.date = '2025-02-30';
    });
    editFrontmatter(path.join(dir, 'works/TST-3.md'), (data) => {
      data.id = 'tst-three';
    });
    const message = problemsOf(dir);
    expect(message).toContain('works/TST-2.md: id: duplicate id "TST-1", also used by works/TST-1.md');
    expect(message).toContain('works/TST-2.md: date: is not a real calendar date');
    expect(message).toMatch(/works\/TST-3\.md: id: must match TST-<number>/);
  });

  it('rejects an answer without model_id, a dangling re_elicits and a tension whose voice did not answer', () => {
    const dir = writeFixtureContent();
    editFrontmatter(path.join(dir, 'divergences/TST-D1.md'), (data) => {
      const answers = data.answers as Record<string, unknown>[];
      delete answers[2]!.model_id;
      (data.tensions as Record<string, unknown>[])[0]!.voice_b = 'Dogwood';
    });
    editFrontmatter(path.join(dir, 'divergences/TST-D2.md'), (data) => {
      data.re_elicits = 'TST-D9';
    });
    const message = problemsOf(dir);
    expect(message).toContain('divergences/TST-D1.md: answers.2.model_id: every answer needs a model_id');
    expect(message).toContain('divergences/TST-D1.md: tensions.0.voice_b: voice "Dogwood" did not answer this question');
    expect(message).toContain('divergences/TST-D2.md: re_elicits: points to "TST-D9", which is not a divergence record');
  });

  it('rejects unknown fields, unknown concepts and model ids missing from the registry', () => {
    const dir = writeFixtureContent();
    editFrontmatter(path.join(dir, 'works/TST-1.md'), (data) => {
      data.ringg = 'core';
      data.lineage = ['nowhere'];
    });
    editFrontmatter(path.join(dir, 'divergences/TST-D1.md'), (data) => {
      (data.answers as Record<string, unknown>[])[1]!.model_id = 'birch-9';
    });
    const message = problemsOf(dir);
    expect(message).toMatch(/works\/TST-1\.md: .*ringg/);
    expect(message).toContain('works/TST-1.md: lineage.0: "nowhere" is not a concept id');
    expect(message).toContain('divergences/TST-D1.md: answers.1.model_id: "birch-9" is not in models.yaml');
  });
});

describe('build artifacts', () => {
  it('derives freshness, re-elicitation links and verbatim answers', async () => {
    const contentDir = writeFixtureContent();
    const artifactsDir = tempDir('build');
    await buildArtifacts({ contentDir, artifactsDir, cacheDir: TEST_CACHE_DIR, embedder: await testEmbedder() });
    const records = JSON.parse(readFileSync(artifactPaths(artifactsDir).divergences, 'utf8')) as DivergenceFull[];
    const original = records.find((record) => record.id === 'TST-D1')!;
    const repeat = records.find((record) => record.id === 'TST-D2')!;
    expect(original.freshness).toEqual({ stale: true, stale_models: [{ model: 'Alder', model_id: 'alder-1', superseded_by: 'alder-2' }] });
    expect(repeat.freshness.stale).toBe(false);
    expect(repeat.re_elicits).toBe('TST-D1');
    expect(original.re_elicited_by).toEqual(['TST-D2']);
    expect(original.answers[0]!.text).toBe('Origin does not settle ownership.\n  Endorsement under pressure does.  ');
    expect(original.title.endsWith('…')).toBe(true);
    expect(original.n_models).toBe(3);
  });

  it('verifies the manifest hashes independently of the engine code', async () => {
    const contentDir = writeFixtureContent();
    const artifactsDir = tempDir('hashes');
    await buildArtifacts({ contentDir, artifactsDir, cacheDir: TEST_CACHE_DIR, embedder: await testEmbedder() });
    const manifest = JSON.parse(readFileSync(artifactPaths(artifactsDir).manifest, 'utf8')) as Manifest;

    const seedFiles = readdirSync(path.join(contentDir, 'works')).sort();
    const seed = createHash('sha256');
    for (const file of seedFiles) seed.update(readFileSync(path.join(contentDir, 'works', file)));
    expect(manifest.hashes.corpus_seed).toBe(seed.digest('hex'));

    const ids = ['TST-D2', 'TST-D1'].sort();
    const atlas = createHash('sha256')
      .update(`${ids.join('\n')}\n${manifest.counts.atlas.store_updated_at}`)
      .digest('hex');
    expect(manifest.hashes.atlas_state).toBe(atlas);
    expect(manifest.counts.atlas.store_updated_at).toBe('2026-01-10T00:00:00.000Z');

    const sortDeep = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(sortDeep)
        : value && typeof value === 'object'
          ? Object.fromEntries(
              Object.entries(value)
                .sort(([a], [b]) => (a < b ? -1 : 1))
                .map(([k, v]) => [k, sortDeep(v)]),
            )
          : value;
    const expected = createHash('sha256')
      .update(JSON.stringify(sortDeep(manifest.counts)))
      .digest('hex');
    expect(manifest.hashes.manifest).toBe(expected);
    expect(manifest.counts.corpus).toMatchObject({ total_works: 4, seed_works: 4, merged_proposals: 0 });
    expect(manifest.counts.atlas).toMatchObject({ live_records: 2, verbatim_answers: 6, tension_axes: 2, delta_records: 1, distinct_questions: 1 });
  });

  it('the manifest hash does not depend on key order', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.integer()), fc.dictionary(fc.string(), fc.integer()), (rings, evidence) => {
        const counts = { corpus: { rings, evidence }, atlas: { live_records: 1 } } as unknown as ManifestCounts;
        const reversed = {
          atlas: { live_records: 1 },
          corpus: {
            evidence: Object.fromEntries(Object.entries(evidence).reverse()),
            rings: Object.fromEntries(Object.entries(rings).reverse()),
          },
        } as unknown as ManifestCounts;
        expect(manifestHash(reversed)).toBe(manifestHash(counts));
        expect(canonicalJson(reversed)).toBe(canonicalJson(counts));
      }),
    );
  });

  it('re-embeds only what changed on a rebuild', async () => {
    const contentDir = writeFixtureContent();
    const cacheDir = tempDir('cache');
    const base = await testEmbedder();
    let embeddedTexts = 0;
    const counting: Embedder = {
      id: base.id,
      dims: base.dims,
      embed: async (texts) => {
        embeddedTexts += texts.length;
        return base.embed(texts);
      },
    };
    const first = await buildArtifacts({ contentDir, artifactsDir: tempDir('first'), cacheDir, embedder: counting });
    // Identical passages (a re-elicited question) are embedded once.
    expect(first.embedded).toBeGreaterThan(0);
    // Plus the re-elicitation pair's answers (whole and per sentence) and the earlier record's
    // claims, embedded once for its longitudinal summary (who moved is read on the claims).
    expect(first.answersEmbedded).toBeGreaterThan(3);
    expect(embeddedTexts).toBe(first.embedded + first.answersEmbedded);
    expect(first.cachedEmbeddings).toBe(first.chunks - first.embedded);

    const file = path.join(contentDir, 'works/TST-2.md');
    const parsed = parseMarkdown(readFileSync(file, 'utf8'));
    writeFileSync(file, stringifyMarkdown(parsed.data, `${parsed.body}\nA new sentence about sourdough starters.`));
    embeddedTexts = 0;
    const second = await buildArtifacts({ contentDir, artifactsDir: tempDir('second'), cacheDir, embedder: counting });
    expect(second.embedded).toBe(1);
    expect(second.answersEmbedded).toBe(0);
    expect(embeddedTexts).toBe(1);
    expect(second.cachedEmbeddings).toBe(second.chunks - 1);
  });

  it('fails the build when a required page is missing', () => {
    const dir = writeFixtureContent();
    unlinkSync(path.join(dir, 'pages/limitations.md'));
    expect(problemsOf(dir)).toContain('pages/limitations.md: (file): is missing');
  });
});
