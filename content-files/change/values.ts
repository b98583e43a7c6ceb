/** Reading the files of a snapshot for the change check: frontmatter, YAML, JSON lines. */
import { isDeepStrictEqual } from 'node:util';
import { parseMarkdown, parseYaml } from '../frontmatter.ts';
import type { Snapshot } from './report.ts';

export type Data = Record<string, unknown>;

export const asRecord = (value: unknown): Data => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Data) : {});
export const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
export const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Values as JSON holds them (no undefined fields), so equal content compares equal. */
export const normalise = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
export const same = (a: unknown, b: unknown): boolean => isDeepStrictEqual(normalise(a), normalise(b));

export interface ParsedFile {
  data: Data;
  body: string;
}

/** A markdown file's frontmatter and body, or undefined when it does not parse (the validator names why). */
export function readMarkdown(snapshot: Snapshot, file: string): ParsedFile | undefined {
  const bytes = snapshot.get(file);
  if (bytes === undefined) return undefined;
  try {
    return parseMarkdown(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

export function readYamlData(snapshot: Snapshot, file: string): Data | undefined {
  const bytes = snapshot.get(file);
  if (bytes === undefined) return undefined;
  try {
    return asRecord(parseYaml(bytes.toString('utf8')));
  } catch {
    return undefined;
  }
}

/** The complete JSON lines of a text (a torn last line is the validator's to report). */
export function jsonLines(text: string): Data[] {
  return text
    .split('\n')
    .slice(0, -1)
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [asRecord(JSON.parse(line))];
      } catch {
        return [];
      }
    });
}

/** Index of the first character where two strings differ. */
export function firstDifference(a: string, b: string): number {
  let index = 0;
  while (index < a.length && index < b.length && a[index] === b[index]) index++;
  return index;
}

export const describe = (value: unknown): string => (value === undefined ? '(absent)' : JSON.stringify(value));
