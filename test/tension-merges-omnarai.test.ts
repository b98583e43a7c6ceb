/**
 * Tension merge proposals on the imported Omnarai data (../shared/omnarai, imported into a
 * temporary folder): a few merges, each between tensions of the same two voices, decided by a
 * curator as content (merged ones fold into the surviving tension).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MERGE_THRESHOLD } from '../core/tension-merges.ts';
import { importOmnarai } from '../scripts/import-omnarai.ts';
import { decideTensionMerge, listTensionMerges } from '../scripts/lib/curate-tension.ts';
import { loadContent } from '../content-files/load-content.ts';
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

    // A curator decides every proposal (the last declined, the others merged), as content.
    const declined = proposals.at(-1)!;
    for (const proposal of proposals) {
      decideTensionMerge(out, proposal.from, proposal.into, proposal === declined ? 'declined' : 'merged', 'curator');
    }
    const decided = loadContent(out).tensionMerges;
    expect(decided.map((decision) => [decision.from, decision.decision])).toEqual(
      proposals.map((proposal) => [proposal.from, proposal === declined ? 'declined' : 'merged']),
    );
    const after = listTensionMerges(out);
    expect(after.tensions).toBe(tensions - (proposals.length - 1));
    // nothing decided is proposed again
    expect(after.proposals.filter((proposal) => proposals.some((earlier) => earlier.from === proposal.from && earlier.into === proposal.into))).toEqual([]);
    // a decision naming no tension, or two tensions of different voices, is refused and nothing is written
    expect(() => decideTensionMerge(out, declined.from, 'nobody__none__nothing', 'merged', 'curator')).toThrow(/is not the key of a tension/);
    expect(loadContent(out).tensionMerges).toHaveLength(proposals.length);
  }, 120_000);
});
