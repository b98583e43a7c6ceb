/** Reading the four Omnarai source files: JSON and JSON Lines parsed into plain objects, bad entries reported. */
import type { RejectedRecord } from './report.ts';

export const SOURCE_FILES = {
  corpus: 'corpus.json',
  media: 'media-corpus.jsonl',
  divergences: 'divergences.jsonl',
  concepts: 'concepts.json',
} as const;

export type OmnaraiSources = Record<keyof typeof SOURCE_FILES, string>;

/** Some fields arrive JSON-encoded as strings (answers, tensions); decode those, keep the rest. */
export function decodeJsonString(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const trimmed = value.trim();
  if (!/^[[{]/.test(trimmed) && trimmed !== 'null') return value;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return value;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

interface Parsed {
  records: Record<string, unknown>[];
  rejected: RejectedRecord[];
}

export function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new Error(`${source} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}

export function objectsOf(list: unknown, source: string, what: string): Parsed {
  if (!Array.isArray(list)) throw new Error(`${source} does not hold ${what}`);
  const records: Record<string, unknown>[] = [];
  const rejected: RejectedRecord[] = [];
  list.forEach((item, index) => {
    if (isPlainObject(item)) records.push(item);
    else rejected.push({ source, reason: `entry ${index} of ${what} is not an object` });
  });
  return { records, rejected };
}

export function parseJsonLines(text: string, source: string): Parsed {
  const records: Record<string, unknown>[] = [];
  const rejected: RejectedRecord[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    try {
      const value = JSON.parse(line) as unknown;
      if (isPlainObject(value)) records.push(value);
      else rejected.push({ source, line: index + 1, reason: 'line is not a JSON object' });
    } catch (error) {
      rejected.push({ source, line: index + 1, reason: `line is not valid JSON: ${(error as Error).message}` });
    }
  });
  return { records, rejected };
}

export interface SourceAnswer {
  model?: unknown;
  lab?: unknown;
  model_id?: unknown;
  date?: unknown;
  text?: unknown;
}

export function answersOf(record: Record<string, unknown>): SourceAnswer[] | undefined {
  const answers = decodeJsonString(record.answers);
  return Array.isArray(answers) ? answers.filter(isPlainObject) : undefined;
}
