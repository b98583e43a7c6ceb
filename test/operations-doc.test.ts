/**
 * docs/OPERATIONS.md's settings table against the config module: every variable the server
 * reads is listed, nothing else is, and each default the table states is the one applied.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatWindow, loadConfig, RATE_LIMIT_SETTINGS, serverSettings } from '../api/config.ts';
import { DEFAULT_RATE_LIMITS } from '../core/rate-limits.ts';
import { REPO_ROOT } from '../core/paths.ts';

function settingsTable(): Map<string, string> {
  const doc = readFileSync(path.join(REPO_ROOT, 'docs', 'OPERATIONS.md'), 'utf8');
  const section = doc.split(/^## Settings$/m)[1]!.split(/^## /m)[0]!;
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const match = line.match(/^\| `([A-Z_]+)` \| ([^|]+) \|/);
    if (match) rows.set(match[1]!, match[2]!.trim());
  }
  return rows;
}

describe('docs/OPERATIONS.md settings table', () => {
  it('lists exactly the settings of the config module, each with the default the code applies', () => {
    const table = settingsTable();
    const settings = serverSettings();
    expect([...table.keys()].sort()).toEqual(settings.map((setting) => setting.name).sort());

    // Defaults computed by loadConfig (folders, the store) as paths under the repository.
    const config = loadConfig({});
    const relative = (file: string) => `\`${path.relative(REPO_ROOT, file)}\``;
    const computed: Record<string, string> = {
      SITE_DIR: relative(config.siteDir),
      STORE_PATH: relative(config.storePath),
      CONTENT_DIR: relative(config.contentDir),
      ARTIFACTS_DIR: relative(config.artifactsDir),
      EMBEDDING_CACHE_DIR: relative(config.cacheDir),
    };
    for (const setting of RATE_LIMIT_SETTINGS) computed[setting.env] = `\`${formatWindow(DEFAULT_RATE_LIMITS[setting.limit])}\``;
    for (const setting of settings) {
      const expected = computed[setting.name] ?? (setting.default === undefined ? 'unset' : `\`${setting.default}\``);
      expect(table.get(setting.name), setting.name).toBe(expected);
    }
  });
});
