/**
 * The retrieval figures the docs quote are B halves (queries never tuned on), and they hold:
 * ArguAna dev and SciFact train imported and built from ../shared (each build choosing its own
 * settings, ADR 0023), then scored through the fast path's retrieve() as
 * `npm run eval:beir -- --sets arguana,scifact` does. The claims are bench/quality-claims.json;
 * bench/README.md quotes the same numbers.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../core/paths.ts';
import { createUseLiteEmbedder, precisionFromEnv } from '../providers/embedder.ts';
import { resolveSet, runQuality } from '../scripts/lib/beir-quality.ts';
import { pathsFromEnv } from '../core/paths.ts';
import { tempDir } from '../devkit/app.ts';
import { haveFixtures, sharedPath } from './helpers/shared-fixtures.ts';

interface Claims {
  embedder: string;
  sets: Record<string, { qrels: string; queries_B: number; B_ndcg10: Record<string, number> }>;
}

const claims = JSON.parse(readFileSync(path.join(REPO_ROOT, 'bench', 'quality-claims.json'), 'utf8')) as Claims;
const benchReadme = readFileSync(path.join(REPO_ROOT, 'bench', 'README.md'), 'utf8');
const DEFAULT = 'default (this build)';
const ENGINE = 'engine default (fixed 0.6 + feedback)';
const WORDS = 'words (BM25) alone';

describe('the B-half figures the docs claim', () => {
  it('are quoted in bench/README.md as claimed', () => {
    for (const set of Object.values(claims.sets)) {
      for (const value of Object.values(set.B_ndcg10)) expect(benchReadme).toContain(value.toFixed(4));
    }
  });

  for (const [name, claim] of Object.entries(claims.sets)) {
    const available = haveFixtures(['corpus.jsonl.gz', 'queries.jsonl.gz', claim.qrels].map((file) => sharedPath('benchmarks', name, file)));
    it.skipIf(!available)(
      `${name}: the build's default, the engine's fixed default and words alone score as claimed on half B`,
      async () => {
        const embedder = await createUseLiteEmbedder({ precision: precisionFromEnv(process.env) });
        // Another embedder build (float32 where the CPU has no int8 products) moves figures a little, not the order.
        const tolerance = embedder.id === claims.embedder ? 0.002 : 0.01;
        const [report] = await runQuality({
          sets: [resolveSet(sharedPath('benchmarks', name), REPO_ROOT)],
          workDir: tempDir(`quality-${name}`),
          cacheDir: pathsFromEnv().cacheDir,
          grid: false,
          rebuild: true,
          only: Object.keys(claim.B_ndcg10),
          embedder,
          log: (line) => console.log(line),
        });
        const b = (label: string) => report!.variants.find((variant) => variant.label === label)!.halves.B;
        expect(b(DEFAULT).queries).toBe(claim.queries_B);
        for (const [label, value] of Object.entries(claim.B_ndcg10)) expect(Math.abs(b(label).ndcg10.mean - value), label).toBeLessThanOrEqual(tolerance);
        // Never worse than its own lexical side, and never below the fixed default it replaced.
        expect(b(DEFAULT).ndcg10.mean).toBeGreaterThanOrEqual(b(WORDS).ndcg10.mean);
        expect(b(DEFAULT).versusEngineDefault.mean).toBeGreaterThanOrEqual(-0.002);
        expect(b(ENGINE).versusEngineDefault.mean).toBe(0);
      },
      900_000,
    );
  }
});
