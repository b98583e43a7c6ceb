/**
 * The judged Atlas-admission set (bench/intent-set.json) and its confusion table: shared by
 * the benchmark (bench/intent.ts, through retrieve()) and the test (test/intent-set.test.ts,
 * through GET /api/query), so both count the same way.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../core/paths.ts';

export const INTENT_SET_FILE = path.join(REPO_ROOT, 'bench', 'intent-set.json');
/** The places a caller sees by default (GET /api/query limit). */
export const TOP = 8;

export interface JudgedQuestion {
  id: string;
  /** factual: no Atlas record belongs in its top 8; contested: `expect` must be there. */
  kind: 'factual' | 'contested';
  split: 'calibrate' | 'holdout';
  question: string;
  /** The Atlas record a contested question paraphrases. */
  expect?: string;
}

/** One returned record, as much as the judgement needs. */
export interface ShownRecord {
  id: string;
  atlas: boolean;
}

export interface Outcome {
  item: JudgedQuestion;
  /** Ids of the Atlas records in the top places, in rank order. */
  atlas: string[];
  /** Contested only: whether the expected record is among them. */
  ownShown: boolean;
}

export function loadIntentSet(file: string = INTENT_SET_FILE): JudgedQuestion[] {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { questions: JudgedQuestion[] };
  for (const item of parsed.questions) {
    if (item.kind === 'contested' && !item.expect) throw new Error(`${item.id}: a contested question names the Atlas record it expects`);
  }
  return parsed.questions;
}

export async function judge(items: readonly JudgedQuestion[], ask: (question: string) => Promise<ShownRecord[]>): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const item of items) {
    const shown = (await ask(item.question)).slice(0, TOP);
    const atlas = shown.filter((record) => record.atlas).map((record) => record.id);
    outcomes.push({ item, atlas, ownShown: item.kind === 'contested' && atlas.includes(item.expect!) });
  }
  return outcomes;
}

export interface Confusion {
  factual: { total: number; clean: number; atlasShown: number };
  contested: { total: number; ownShown: number; otherAtlasOnly: number; noAtlas: number };
}

export function confusion(outcomes: readonly Outcome[]): Confusion {
  const factual = outcomes.filter((outcome) => outcome.item.kind === 'factual');
  const contested = outcomes.filter((outcome) => outcome.item.kind === 'contested');
  return {
    factual: {
      total: factual.length,
      clean: factual.filter((outcome) => outcome.atlas.length === 0).length,
      atlasShown: factual.filter((outcome) => outcome.atlas.length > 0).length,
    },
    contested: {
      total: contested.length,
      ownShown: contested.filter((outcome) => outcome.ownShown).length,
      otherAtlasOnly: contested.filter((outcome) => !outcome.ownShown && outcome.atlas.length > 0).length,
      noAtlas: contested.filter((outcome) => outcome.atlas.length === 0).length,
    },
  };
}

/** The confusion table as markdown: judged kind by what the top 8 showed. */
export function renderConfusion(table: Confusion): string {
  const { factual, contested } = table;
  return [
    `| judged (n) | no Atlas record in top ${TOP} | its own Atlas record in top ${TOP} | only other Atlas records |`,
    '|---|---|---|---|',
    `| factual (${factual.total}) | **${factual.clean}** | — | ${factual.atlasShown} (any Atlas record) |`,
    `| contested (${contested.total}) | ${contested.noAtlas} | **${contested.ownShown}** | ${contested.otherAtlasOnly} |`,
  ].join('\n');
}

/** Questions that miss the aim, for the report. */
export function misses(outcomes: readonly Outcome[]): string[] {
  return outcomes
    .filter((outcome) => (outcome.item.kind === 'factual' ? outcome.atlas.length > 0 : !outcome.ownShown))
    .map(
      (outcome) =>
        `${outcome.item.id} (${outcome.item.split}): ${outcome.item.question}${outcome.atlas.length > 0 ? ` → Atlas ${outcome.atlas.join(', ')}` : ' → no Atlas record'}`,
    );
}
