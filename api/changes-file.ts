/** data/changes.json: the content's revisions the build read from git (scripts/lib/change-history.ts), what GET /api/changes answers from. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { artifactPaths } from '../core/artifacts.ts';
import type { Corpus } from '../core/corpus.ts';
import { recordHistory, recordKey, recordRevisions } from '../core/record-history.ts';
import type { ChangeHistory } from '../schemas/api/changes.ts';
import type { RecordHistory, RecordRevision } from '../schemas/api/record-history.ts';

/**
 * The history the build wrote beside the corpus's public files; artifacts built before the
 * history existed have none, which reads as history unavailable (never as "nothing changed").
 */
export function readChangeHistoryFile(corpus: Pick<Corpus, 'publicDir' | 'manifest'>): ChangeHistory {
  const file = artifactPaths(path.dirname(corpus.publicDir)).changes;
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as ChangeHistory;
  return {
    history: 'unavailable',
    reason: 'these artifacts were built before the build recorded the change history: rebuild them',
    current_rev: corpus.manifest.published_releases.corpus_rev,
    oldest_rev: null,
    revisions: [],
  };
}

const histories = new WeakMap<object, ChangeHistory>();
const atlasRevisions = new WeakMap<ChangeHistory, Map<string, RecordRevision[]>>();

/** The history of a corpus's artifacts, read once for the process (the artifacts, and so the history, are fixed for its life). */
export function changeHistoryOf(corpus: Pick<Corpus, 'publicDir' | 'manifest'>): ChangeHistory {
  let history = histories.get(corpus);
  if (history === undefined) {
    history = readChangeHistoryFile(corpus);
    histories.set(corpus, history);
  }
  return history;
}

/** One Atlas record's revisions (GET /api/divergences?id=, the MCP read_divergences tool), from the same history. */
export function atlasRecordHistory(corpus: Pick<Corpus, 'publicDir' | 'manifest'>, id: string): RecordHistory {
  const history = changeHistoryOf(corpus);
  let byRecord = atlasRevisions.get(history);
  if (byRecord === undefined) {
    byRecord = recordRevisions(history, ['divergence']);
    atlasRevisions.set(history, byRecord);
  }
  return recordHistory(history, byRecord.get(recordKey('divergence', id)));
}
