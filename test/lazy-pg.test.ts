/**
 * PostgreSQL's client is loaded only when a PostgreSQL store is opened: a process that opens
 * the default embedded SQLite store never loads `pg` (checked in a process of its own, with a
 * PostgreSQL URL as the control), and no production module outside the PostgreSQL driver
 * imports `pg` or that driver statically.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../core/paths.ts';
import { tempDir } from '../devkit/app.ts';

function probe(location: string): { opened: boolean; pgLoaded: boolean } {
  const out = execFileSync(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'test/helpers/store-probe.ts'), location], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return JSON.parse(out) as { opened: boolean; pgLoaded: boolean };
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sources(file);
    return /\.(ts|cjs|mjs|js)$/.test(name) ? [file] : [];
  });
}

describe('the PostgreSQL client is loaded lazily', () => {
  it('a process that opens the SQLite store never loads pg; one that opens a PostgreSQL URL does', () => {
    expect(probe(path.join(tempDir('lazy-pg'), 'store.db'))).toEqual({ opened: true, pgLoaded: false });
    // Nothing listens on port 1: the open fails, after the driver and its client were loaded.
    expect(probe('postgres://postgres@127.0.0.1:1/none')).toEqual({ opened: false, pgLoaded: true });
  }, 120_000);

  it('no production module but the PostgreSQL driver imports pg or the driver statically', () => {
    const roots = ['api', 'scripts', 'storage', 'core', 'providers', 'content-files', 'schemas', 'bin'].map((dir) => path.join(REPO_ROOT, dir));
    const offenders = roots
      .flatMap((root) => sources(root))
      .filter((file) => !/[\\/]storage[\\/](postgres[\\/]|postgres-store\.ts$)/.test(file))
      .filter((file) =>
        /^\s*import\s(?!type\b)[^;]*from\s+['"](pg|[^'"]*postgres-store\.ts|[^'"]*storage\/postgres\/[^'"]*)['"]/m.test(readFileSync(file, 'utf8')),
      );
    expect(offenders.map((file) => path.relative(REPO_ROOT, file))).toEqual([]);
  });
});
