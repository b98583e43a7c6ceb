/**
 * Fixtures kept in ../shared beside the repository (real data, benchmarks, injection payloads):
 * named relative to the repository root, never by a machine's absolute path, never copied in.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../core/paths.ts';

export const SHARED_DIR = path.resolve(REPO_ROOT, '../shared');

export function sharedPath(...segments: string[]): string {
  return path.join(SHARED_DIR, ...segments);
}

/** CI=true, CI=1 or any CI value but false/0, as CI services set it. */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== 'false' && value !== '0';
}

/**
 * Whether every fixture file a suite needs is present. Outside CI a missing fixture skips the
 * suite (a checkout without ../shared); under CI it throws, failing the test file: a skip there
 * would report a suite that never ran as green.
 */
export function haveFixtures(files: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  const missing = files.filter((file) => !existsSync(file));
  if (missing.length === 0) return true;
  if (isCi(env)) {
    const named = missing.map((file) => (file.startsWith(SHARED_DIR + path.sep) ? path.relative(REPO_ROOT, file) : file)).join(', ');
    throw new Error(`fixture${missing.length > 1 ? 's' : ''} missing under CI (a suite is never skipped there): ${named}`);
  }
  return false;
}
