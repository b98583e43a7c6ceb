/** data/changes.json: the content's revisions the build read from git (scripts/lib/change-history.ts), what GET /api/changes answers from. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { artifactPaths } from '../core/artifacts.ts';
import type { Corpus } from '../core/corpus.ts';
import type { ChangeHistory } from '../schemas/api/changes.ts';

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
