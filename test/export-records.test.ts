import { spawnSync } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { councilToFrontmatter, COUNCIL_METHOD } from '../core/live/council.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { loadContent } from '../content-files/load-content.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { tempDir } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

describe('export of persisted council records', () => {
  it('writes valid content markdown for a pull request', async () => {
    const contentDir = tempDir('export-content');
    cpSync(writeFixtureContent(), contentDir, { recursive: true });
    const storePath = path.join(tempDir('export-store'), 'store.db');
    const store = createSqliteStore(storePath);
    const answer = (model: string, model_id: string) => ({
      model,
      family: model,
      lab: 'Lab',
      model_id,
      date: '2026-02-01T00:00:00.000Z',
      status: 'answered' as const,
      text: `${model} says so.`,
      truncated: false,
      latency_ms: 1,
    });
    const frontmatter = councilToFrontmatter(
      {
        question_received: 'Q?',
        question: 'Q?',
        method: COUNCIL_METHOD,
        date: '2026-02-01',
        n_models: 2,
        panel: [answer('Birch', 'birch-1'), answer('Cedar', 'cedar-1')],
        failed_voices: [],
        reading: 'r',
        deliberation_card: null,
        chair: 'Birch',
        chair_attempts: [],
        cost_usd: 0,
        latency_ms: 1,
        note: '',
        tensions: [{ topic: 't', voice_a: 'Birch', claim_a: 'a', voice_b: 'Cedar', claim_b: 'b', status: 'emerging' }],
      },
      'TST-D1769904000000',
      '2026-02-01T00:00:00.000Z',
    );
    await store.saveRecord({ id: 'TST-D1769904000000', frontmatter, body: '', persisted_at: '2026-02-01T00:00:00.000Z' });
    await store.close();
    const result = spawnSync(
      process.execPath,
      [path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(REPO_ROOT, 'scripts/export-records.ts'), '--store', storePath, '--content', contentDir],
      { encoding: 'utf8' },
    );
    expect(result.status, result.stderr).toBe(0);
    expect(existsSync(path.join(contentDir, 'divergences/TST-D1769904000000.md'))).toBe(true);
    const content = loadContent(contentDir);
    expect(content.divergences.map((entry) => entry.data.id)).toContain('TST-D1769904000000');
  });
});
