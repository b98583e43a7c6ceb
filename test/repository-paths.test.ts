/**
 * No machine's absolute paths in the repository (issue 13 item 12): the shared folder is
 * `../shared` relative to the repository root, and a suite whose ../shared fixture is missing
 * fails under CI instead of skipping.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../core/paths.ts';
import { haveFixtures, isCi, sharedPath, SHARED_DIR } from './helpers/shared-fixtures.ts';

/** Folders that are built, installed or cached, not written. */
const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist', 'artifacts', '.cache', '.data', '.astro', 'build']);
const TEXT_FILE = /\.(ts|mts|cts|js|mjs|cjs|astro|md|json|ya?ml|cc|h|wat|sh)$/;
// Spelled in pieces so that this file does not match itself.
const MACHINE_PATH = new RegExp(['/' + 'work/', '/' + 'home/', '/' + 'Users/', '[A-Z]:\\\\' + 'Users\\\\'].join('|'));

function textFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : textFiles(path.join(dir, entry.name));
    return entry.isFile() && TEXT_FILE.test(entry.name) && entry.name !== 'package-lock.json' ? [path.join(dir, entry.name)] : [];
  });
}

describe('no absolute machine paths', () => {
  it('no source, test, benchmark or document names a folder by a machine path', () => {
    const files = textFiles(REPO_ROOT);
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) => (MACHINE_PATH.test(line) ? [`${path.relative(REPO_ROOT, file)}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it('the shared folder is ../shared beside the repository root', () => {
    expect(SHARED_DIR).toBe(path.resolve(REPO_ROOT, '..', 'shared'));
    expect(sharedPath('omnarai', 'corpus.json')).toBe(path.join(REPO_ROOT, '..', 'shared', 'omnarai', 'corpus.json'));
  });
});

describe('a missing ../shared fixture', () => {
  const missing = sharedPath('no-such-fixture', 'data.json');

  it('skips the suite outside CI', () => {
    expect(haveFixtures([missing], {})).toBe(false);
    expect(haveFixtures([missing], { CI: 'false' })).toBe(false);
  });

  it('fails it under CI, naming the file', () => {
    for (const CI of ['true', '1', 'yes']) expect(() => haveFixtures([missing], { CI }), `CI=${CI}`).toThrow(/missing under CI.*no-such-fixture\/data\.json/);
    expect(isCi({ CI: 'true' })).toBe(true);
    expect(isCi({ CI: '0' })).toBe(false);
  });

  it('present fixtures run the suite, in CI or not', () => {
    const present = path.join(REPO_ROOT, 'package.json');
    expect(haveFixtures([present], {})).toBe(true);
    expect(haveFixtures([present], { CI: 'true' })).toBe(true);
  });
});
