/**
 * Line diffs of content files before and after a curator's write, for tests that assert an
 * edit is minimal: which lines were inserted where, and which were removed (an in-place edit
 * removes none). A longest-common-subsequence diff over lines, small files only.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export interface Hunk {
  /** Index in the old file's lines before which the lines were inserted. */
  at: number;
  added: string[];
}

export interface LineDiff {
  removed: string[];
  hunks: Hunk[];
}

/** Lines of a file; the last element is '' when the file ends with a newline. */
const lines = (text: string) => text.split('\n');

export function lineDiff(before: string, after: string): LineDiff {
  const a = lines(before);
  const b = lines(after);
  // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  const removed: string[] = [];
  const hunks: Hunk[] = [];
  let i = 0;
  let j = 0;
  const add = (line: string) => {
    const last = hunks[hunks.length - 1];
    if (last && last.at === i) last.added.push(line);
    else hunks.push({ at: i, added: [line] });
  };
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else if (j < b.length && (i === a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      add(b[j++]!);
    } else {
      removed.push(a[i++]!);
    }
  }
  return { removed, hunks };
}

/** Every file under `dir` (relative path → bytes as text), to find what a write touched. */
export function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (relative: string) => {
    for (const name of readdirSync(path.join(dir, relative))) {
      const child = path.posix.join(relative, name);
      if (statSync(path.join(dir, child)).isDirectory()) walk(child);
      else files.set(child, readFileSync(path.join(dir, child), 'latin1'));
    }
  };
  walk('');
  return files;
}

/** Files added, removed or changed between two snapshots, sorted. */
export function changedFiles(before: Map<string, string>, after: Map<string, string>): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((name) => before.get(name) !== after.get(name)).sort();
}
