/**
 * Cross-file rules of content/tensions/<key>.yaml: the file is named after its key, the key
 * names a tension of a published Atlas record, the history runs oldest first, and what a
 * disposition points at exists (the voice of a reclassification) or looks like what it names.
 */
import path from 'node:path';
import type { DivergenceFrontmatter, TensionFile, TensionMergeDecision } from '../schemas/content.ts';
import { tensionKey } from '../core/tension-identity.ts';
import { mergeMap } from '../core/tension-merges.ts';
import type { ContentIssue } from './issues.ts';

export function checkTensionFiles(
  files: readonly { file: string; data: TensionFile }[],
  divergences: readonly { data: DivergenceFrontmatter }[],
  issues: ContentIssue[],
): void {
  const voicesByKey = new Map<string, Set<string>>();
  for (const { data } of divergences) {
    for (const tension of data.tensions) {
      voicesByKey.set(tensionKey(tension.voice_a, tension.voice_b, tension.topic), new Set([tension.voice_a, tension.voice_b]));
    }
  }
  const recordIds = new Set(divergences.map((entry) => entry.data.id));
  for (const { file, data } of files) {
    if (path.posix.basename(file) !== `${data.key}.yaml`) {
      issues.push({ file, field: 'key', message: `file must be named ${data.key}.yaml after its key` });
    }
    const voices = voicesByKey.get(data.key);
    if (!voices) {
      issues.push({ file, field: 'key', message: `"${data.key}" is not the key of a tension of any Atlas record (GET /api/tensions lists the keys)` });
    }
    data.dispositions.forEach((disposition, index) => {
      const previous = data.dispositions[index - 1];
      if (previous && Date.parse(disposition.at) < Date.parse(previous.at)) {
        issues.push({ file, field: `dispositions.${index}.at`, message: 'is earlier than the disposition before it; history is append-only, oldest first' });
      }
      if (disposition.kind === 'reclassified' && voices && !voices.has(disposition.earlier_voice)) {
        issues.push({
          file,
          field: `dispositions.${index}.earlier_voice`,
          message: `"${disposition.earlier_voice}" is not a voice of this tension (${[...voices].join(', ')})`,
        });
      }
      // A council review's record is persisted by the server first (the store), and reaches
      // content/divergences/ with `npm run export:records`; so only its id's shape is checked here.
      if (disposition.kind === 'council-review' && !recordIds.has(disposition.record_id) && !/-D\d+$/.test(disposition.record_id)) {
        issues.push({ file, field: `dispositions.${index}.record_id`, message: `"${disposition.record_id}" is not an Atlas record id` });
      }
    });
  }
}

/** Curators' merge decisions (npm run curate -- tension-merge), one file, append-only. */
export const TENSION_MERGES_FILE = 'tension-merges.yaml';

/**
 * content/tension-merges.yaml: each decision names two tensions of published Atlas records
 * between the same two voices, the history runs oldest first, and the merges form no circle.
 */
export function checkTensionMerges(
  decisions: readonly TensionMergeDecision[],
  divergences: readonly { data: DivergenceFrontmatter }[],
  issues: ContentIssue[],
): void {
  const voicesByKey = new Map<string, string>();
  for (const { data } of divergences) {
    for (const tension of data.tensions)
      voicesByKey.set(tensionKey(tension.voice_a, tension.voice_b, tension.topic), tensionKey(tension.voice_a, tension.voice_b, '-'));
  }
  const file = TENSION_MERGES_FILE;
  decisions.forEach((decision, index) => {
    const field = `decisions.${index}`;
    for (const side of ['from', 'into'] as const) {
      if (!voicesByKey.has(decision[side]))
        issues.push({ file, field: `${field}.${side}`, message: `"${decision[side]}" is not the key of a tension of any Atlas record` });
    }
    if (decision.from === decision.into) issues.push({ file, field, message: 'a tension cannot merge into itself' });
    else if (voicesByKey.has(decision.from) && voicesByKey.has(decision.into) && voicesByKey.get(decision.from) !== voicesByKey.get(decision.into)) {
      issues.push({ file, field, message: 'a merge joins tensions between the same two voices only' });
    }
    const previous = decisions[index - 1];
    if (previous && Date.parse(decision.at) < Date.parse(previous.at)) {
      issues.push({ file, field: `${field}.at`, message: 'is earlier than the decision before it; history is append-only, oldest first' });
    }
  });
  try {
    mergeMap(decisions);
  } catch (error) {
    issues.push({ file, field: 'decisions', message: (error as Error).message });
  }
}
