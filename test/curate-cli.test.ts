/**
 * The curator CLI as a curator uses it (issue 13, item 4): `curate -- list | grep …` used to
 * stop at 64 KiB because the process exited before stdout drained. The CLI is spawned with
 * its stdout piped into a reader that reads slowly, or that stops early like `head -c`, over a
 * store holding far more than 64 KiB of pending items; --json, filters and paging run in the
 * store and are checked against the items put there.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import type { ContributionRecord } from '../storage/store.ts';
import { tempDir } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { runCliSlowly, type CliRun } from './helpers/slow-reader.ts';

const ITEMS = 1200;
const CLIENTS = ['a1b2c3d4e5f6a1b2c3d4e5f6', 'ffeeddccbbaa998877665544', '0123456789abcdef01234567'];

let env: NodeJS.ProcessEnv;
let stored: ContributionRecord[];

beforeAll(async () => {
  const storePath = path.join(tempDir('curate-cli'), 'store.db');
  const store = createSqliteStore(storePath);
  const limit = { key: 'contribute:test', limit: ITEMS * 2, windowMs: 3_600_000 };
  for (let n = 0; n < ITEMS; n++) {
    const answer = n % 4 !== 3;
    const padded = String(n).padStart(5, '0');
    await store.submitContribution(
      {
        id: `ctb_${padded}`,
        kind: answer ? 'answer' : 'proposal',
        record_id: answer ? (n % 2 === 0 ? 'TST-D1' : 'TST-D2') : null,
        identity: `model-${n % 9}`,
        justification: answer ? 'missing_voice' : null,
        payload: answer
          ? { answer: `Answer ${padded}: ${'a considered position on ownership and training, '.repeat(4)}` }
          : { title: `Proposal ${padded}`, text: 'Reading two records together.', sources: ['TST-D1'], evidence: 'interpretive' },
        content_hash: `hash-${n}`,
        idempotency_key: null,
        client: CLIENTS[n % CLIENTS.length]!,
      },
      limit,
      new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
    );
  }
  for (let n = 0; n < ITEMS; n += 10)
    await store.reviewContribution(
      `ctb_${String(n).padStart(5, '0')}`,
      { status: n % 20 === 0 ? 'approved' : 'rejected', reviewer: 'curator', reason: 'checked' },
      new Date(Date.UTC(2026, 0, 2)),
    );
  stored = await store.listContributions();
  await store.close();
  env = { ...process.env, STORE_PATH: storePath, CONTENT_DIR: writeFixtureContent() };
});

const curate = (args: string[], options: { stopAfter?: number } = {}): Promise<CliRun> => runCliSlowly('scripts/curate.ts', args, { env, ...options });

const pending = () => stored.filter((item) => item.status === 'pending');
const idsIn = (text: string) => text.match(/^ctb_\d{5}(?= )/gm) ?? [];

describe('curate list: no output is lost', () => {
  it('a slow reader gets every one of well over 64 KiB of pending items, as text', async () => {
    const run = await curate(['list', '--limit', 'all']);
    expect(run.code, run.stderr).toBe(0);
    expect(Buffer.byteLength(run.stdout)).toBeGreaterThan(4 * 65_536);
    expect(idsIn(run.stdout)).toEqual(pending().map((item) => item.id));
    expect(run.stdout.split('\n')[0]).toBe(`pending contributions: 1-${pending().length} of ${pending().length}`);
  });

  it('and as one JSON document', async () => {
    const run = await curate(['list', '--limit', 'all', '--json', '--status', 'all']);
    expect(run.code, run.stderr).toBe(0);
    const page = JSON.parse(run.stdout) as { total: number; count: number; limit: null; next_offset: null; items: ContributionRecord[] };
    expect(page).toMatchObject({ total: ITEMS, count: ITEMS, offset: 0, limit: null, next_offset: null });
    expect(page.items).toEqual(stored);
  });

  it('a reader that stops early (head -c) ends the CLI quietly, with no EPIPE error', async () => {
    const run = await curate(['list', '--limit', 'all'], { stopAfter: 1000 });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
  });
});

describe('curate list: filters and paging', () => {
  it('pages 50 at a time by default and says where the next page starts', async () => {
    const run = await curate(['list']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split('\n')[0]).toBe(`pending contributions: 1-50 of ${pending().length} (next page: --offset 50)`);
    expect(idsIn(run.stdout)).toEqual(
      pending()
        .slice(0, 50)
        .map((item) => item.id),
    );
    expect(run.stdout).toContain('voices already there: Alder (alder-1)');
    expect(run.stdout).toContain(`client: ${CLIENTS[1]}`);
  });

  it('combines --status, --kind, --record, --client, --limit and --offset in one query', async () => {
    const matching = stored.filter((item) => item.status === 'pending' && item.kind === 'answer' && item.record_id === 'TST-D2' && item.client === CLIENTS[2]);
    const run = await curate(['list', '--json', '--kind', 'answer', '--record', 'TST-D2', '--client', CLIENTS[2]!, '--limit', '7', '--offset', '5']);
    expect(run.code, run.stderr).toBe(0);
    const page = JSON.parse(run.stdout) as { total: number; items: ContributionRecord[]; next_offset: number };
    expect(page.total).toBe(matching.length);
    expect(page.items.map((item) => item.id)).toEqual(matching.slice(5, 12).map((item) => item.id));
    expect(page.next_offset).toBe(12);

    const approved = await curate(['list', '--status', 'approved', '--kind', 'answer', '--record', 'TST-D1', '--limit', '3', '--offset', '2']);
    const expected = stored.filter((item) => item.status === 'approved' && item.kind === 'answer' && item.record_id === 'TST-D1');
    expect(expected.length).toBeGreaterThan(5);
    expect(approved.stdout.split('\n')[0]).toBe(
      `approved contributions matching kind answer, record TST-D1: 3-5 of ${expected.length} (next page: --offset 5)`,
    );
    expect(idsIn(approved.stdout)).toEqual(expected.slice(2, 5).map((item) => item.id));
  });

  it('a filter that matches nothing, or a page past the end, says so', async () => {
    const none = await curate(['list', '--record', 'TST-D9']);
    expect(none.stdout.trim()).toBe('no pending contributions matching record TST-D9');
    const past = await curate(['list', '--offset', '100000', '--json']);
    expect(JSON.parse(past.stdout)).toMatchObject({ total: pending().length, count: 0, items: [], next_offset: null });
  });

  it('rejects bad options with exit code 2 and the usage; --help prints it', async () => {
    for (const args of [
      ['list', '--kind', 'essay'],
      ['list', '--status', 'done'],
      ['list', '--limit', '0'],
      ['list', '--offset', '-1'],
      ['list', '--frobnicate'],
      ['dance'],
    ]) {
      const run = await curate(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/usage: npm run curate/);
    }
    const help = await curate(['--help']);
    expect(help.code).toBe(0);
    for (const option of ['--json', '--record <id>', '--kind answer|proposal', '--client <hash>', '--status', '--limit N|all', '--offset M'])
      expect(help.stdout).toContain(option);
  });

  it('show --json prints the stored contribution', async () => {
    const run = await curate(['show', stored[3]!.id, '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(stored[3]);
  });
});
