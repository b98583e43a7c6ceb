/**
 * Tension merge proposals on the imported Omnarai data (../shared/omnarai, imported into a
 * temporary folder): a few merges, each between tensions of the same two voices.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MERGE_THRESHOLD } from '../core/tension-merges.ts';
import { importOmnarai } from '../scripts/import-omnarai.ts';
import { listTensionMerges } from '../scripts/lib/curate-tension.ts';
import { tempDir } from '../devkit/app.ts';
import { haveFixtures, sharedPath } from './helpers/shared-fixtures.ts';

const dataDir = sharedPath('omnarai');
const hasData = haveFixtures(['corpus.json', 'media-corpus.jsonl', 'divergences.jsonl', 'concepts.json'].map((file) => path.join(dataDir, file)));

describe.skipIf(!hasData)('merge proposals on the imported Omnarai data', () => {
  it('proposes a few merges, each between tensions of the same two voices, the more-sighted surviving', () => {
    const out = path.join(tempDir('omnarai-merges'), 'content');
    importOmnarai({ from: dataDir, out, force: true });
    const { tensions, proposals } = listTensionMerges(out);
    expect(tensions).toBeGreaterThan(300);
    expect(proposals.length).toBeGreaterThan(0);
    expect(proposals.length).toBeLessThan(tensions / 10);
    for (const proposal of proposals) {
      const [into, from] = [proposal.into.split('__'), proposal.from.split('__')];
      expect(into.slice(0, 2), proposal.from).toEqual(from.slice(0, 2));
      expect(proposal.into).not.toBe(proposal.from);
      expect(proposal.similarity).toBeGreaterThanOrEqual(MERGE_THRESHOLD);
    }
  }, 120_000);
});
