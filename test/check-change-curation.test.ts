/**
 * The change check against the writes curators and tools make (issue 28): a certification
 * written by `certify --write` passes and the same block typed by hand is refused; its evidence
 * log is append-only; `curate approve` (an answer, an import) and `curate tension` pass; an
 * import keeps its origin's tier and provenance.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../core/manifest.ts';
import { appendDisposition } from '../content-files/tension-dispositions.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { approveContribution } from '../scripts/lib/curation.ts';
import { approveImport } from '../scripts/lib/curation-imports.ts';
import { certify } from '../scripts/lib/certify/certify.ts';
import { certifyPanel } from '../scripts/lib/certify/panel.ts';
import { calibrateContent } from '../scripts/lib/certify/calibrate.ts';
import { createLocalSpendGuard } from '../scripts/lib/certify/spend-guard.ts';
import { runChangeCheck, type ChangeCheckOutcome } from '../scripts/lib/check-change.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { scriptWorld, stanceEmbedder } from '../devkit/fake-world.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { BASE_WORLD, PANEL, QUESTIONS, USAGE, UTILITIES, panelConfig, writeRecord } from './helpers/certify-world.ts';
import { createTestRepo, type TestRepo } from './helpers/git-repo.ts';

let repo: TestRepo;
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  repo = createTestRepo();
  return () => repo.dispose();
});

const check = (override?: string): ChangeCheckOutcome => runChangeCheck({ contentDir: repo.content, base: 'main', override });
const refusals = (outcome: ChangeCheckOutcome) => outcome.report!.refusals.map(({ file, field, rule }) => ({ file, field, rule }));
const groups = (outcome: ChangeCheckOutcome) => outcome.report!.allowed.map(({ group, file }) => ({ group, file }));
const blockOf = (text: string) => /^certification:\n(?:[ \t].*\n)*/m.exec(text)![0];

async function certifyWrite(id: string): Promise<void> {
  fake.reset();
  scriptWorld(fake, () => structuredClone(BASE_WORLD), PANEL, Object.values(UTILITIES), USAGE);
  await certify({
    ...certifyPanel(panelConfig(fake.baseURL), {}),
    contentDir: repo.content,
    selection: { ids: [id] },
    settings: { t: 3, k: 2, runs: 1, controls: 0, thresholds: { driMin: 1.5, betweenFloor: 0.08, persistenceMin: 0.75 } },
    embedder: stanceEmbedder(),
    guard: createLocalSpendGuard(5),
    concurrency: 4,
    now: () => new Date('2026-11-24T12:00:00Z'),
    // The scripted world speaks v1's markers; the base commit holds this Atlas's calibration (floor 0 here).
    method: 'perturbation-v1',
    floor: { pair_auc: 0, side_accuracy: 0 },
    write: true,
  });
}

describe('certification blocks', () => {
  beforeEach(async () => {
    writeRecord(repo.content, 'TST-D3', QUESTIONS.flip);
    await calibrateContent({ contentDir: repo.content, embedder: stanceEmbedder(), methods: ['perturbation-v1'], resamples: 50, write: true });
    repo.commit('a record to certify, and the Atlas calibrated');
  });

  it('written by certify --write: passes, listed with its evidence', async () => {
    await certifyWrite('TST-D3');
    const outcome = check();
    expect(refusals(outcome)).toEqual([]);
    expect(outcome.code).toBe(0);
    expect(groups(outcome)).toEqual([
      { group: 'evidence', file: 'divergences/TST-D3.certification.jsonl' },
      { group: 'certification', file: 'divergences/TST-D3.md' },
    ]);
    expect(outcome.text).toMatch(
      /Certification written by npm run certify -- --write \(1\)\n {2}\+ divergences\/TST-D3\.md: tier "C0" → "C1", perturbation-v1/,
    );
  });

  it('the same block typed by hand, without its evidence, is refused', async () => {
    await certifyWrite('TST-D3');
    const block = blockOf(repo.read('divergences/TST-D3.md'));
    repo.edit('divergences/TST-D3.md', (text) => text.replace(block, ''));
    rmSync(path.join(repo.content, 'divergences/TST-D3.certification.jsonl'));
    repo.commit('back to the base');
    repo.edit('divergences/TST-D3.md', (text) => text.replace('answers:', `${block}answers:`));
    const outcome = check();
    expect(refusals(outcome)).toEqual([{ file: 'divergences/TST-D3.md', field: 'certification', rule: 'certification-unearned' }]);
    expect(outcome.code).toBe(1);
  });

  it('a block edited after certify --write is not what the log states', async () => {
    await certifyWrite('TST-D3');
    repo.edit('divergences/TST-D3.md', (text) => text.replace('  tier: C1', '  tier: C3'));
    const outcome = check();
    expect(refusals(outcome)).toEqual([{ file: 'divergences/TST-D3.md', field: 'certification.tier', rule: 'certification-unearned' }]);
    expect(outcome.text).toContain('the log states tier "C1"');
  });

  it('an evidence log edited anywhere but at its end is refused', async () => {
    await certifyWrite('TST-D3');
    repo.commit('certified');
    const log = 'divergences/TST-D3.certification.jsonl';
    repo.edit(log, (text) => text.replace('"label":"held"', '"label":"flipped"'));
    expect(refusals(check())).toEqual([{ file: log, field: expect.stringMatching(/^line \d+$/), rule: 'append-only' }]);
    repo.edit(log, () => '');
    expect(refusals(check())[0]).toMatchObject({ file: log, rule: 'append-only' });
  });
});

describe('curators', () => {
  it('curate approve (an answer) and curate tension pass with their summary', async () => {
    const store = createSqliteStore(':memory:');
    await store.submitContribution(
      {
        id: 'ctb_1',
        kind: 'answer',
        record_id: 'TST-D1',
        identity: 'cedar-1',
        justification: 'missing_voice',
        payload: { answer: 'A later word.\n\nVerbatim.' },
        content_hash: sha256Hex('ctb_1'),
        idempotency_key: null,
        client: 'c0ffee',
      },
      { key: 'contribute:test', limit: 100, windowMs: 3_600_000 },
      new Date('2026-03-01T00:00:00Z'),
    );
    await approveContribution(store, repo.content, 'ctb_1', { by: 'curator-ana', now: new Date('2026-03-04T00:00:00Z') });
    await store.close();
    appendDisposition(repo.content, 'alder__birch__ownership-of-refusal', { kind: 'held', by: 'ana', at: '2026-03-04T10:00:00Z', reason: 'Both live.' });
    const outcome = check();
    expect(refusals(outcome)).toEqual([]);
    expect(groups(outcome)).toEqual([
      { group: 'new-answers', file: 'divergences/TST-D1.md' },
      { group: 'dispositions', file: 'tensions/alder__birch__ownership-of-refusal.yaml' },
    ]);
  });

  it('curate approve of an import passes; its provenance, origin copy and tier then never change', async () => {
    const origin = writeFixtureContent({ prefix: 'AAA' });
    const markdown = readFileSync(path.join(origin, 'divergences/AAA-D1.md'), 'utf8');
    rmSync(origin, { recursive: true, force: true });
    const store = createSqliteStore(':memory:');
    const hash = sha256Hex(markdown);
    const provenance = {
      origin: 'http://a.test',
      origin_node: 'pn1:aa',
      origin_name: 'Origin A',
      origin_prefix: 'AAA',
      original_id: 'AAA-D1',
      original_url: 'http://a.test/records/AAA-D1.md',
      content_hash: hash,
      key_id: 'aa',
      public_key: 'AAAA',
      signature: 'c2ln',
      licence: 'CC BY-SA 4.0',
      attribution: 'Origin A, CC BY-SA 4.0',
      pulled_at: '2026-01-01T00:00:00.000Z',
    };
    await store.stageImports({ origin: 'http://a.test', node_id: 'pn1:aa', public_key: 'AAAA', last_signed_at: '2026-01-01T00:00:00.000Z' }, [
      {
        id: 'imp_1',
        origin_node: 'pn1:aa',
        origin: 'http://a.test',
        record_id: 'AAA-D1',
        content_hash: hash,
        markdown,
        provenance,
        staged_at: '2026-01-01T00:00:01.000Z',
      },
    ]);
    await approveImport(store, repo.content, 'imp_1', { by: 'cur', now: new Date('2026-03-04T00:00:00Z') });
    await store.close();
    const approved = check();
    expect(refusals(approved)).toEqual([]);
    // The origin stated C3 (the fixture's typed tier): kept as the origin stated it.
    expect(groups(approved)).toEqual([
      { group: 'new-records', file: 'divergences/AAA-D1.md' },
      { group: 'imports', file: 'divergences/AAA-D1.md' },
      { group: 'imports', file: 'divergences/AAA-D1.md' },
      { group: 'imports', file: 'federation/AAA-D1.md' },
    ]);
    expect(approved.text).toContain('certification "C3" as its origin stated it');
    // An origin copy that is not the bytes the origin signed (content_hash) is refused.
    repo.edit('federation/AAA-D1.md', (text) => text.replace('installed, not owned.', 'installed, not owned!'));
    expect(refusals(check())).toEqual([{ file: 'divergences/AAA-D1.md', field: 'provenance.federation.content_hash', rule: 'federation-provenance' }]);
    writeFileSync(path.join(repo.content, 'federation/AAA-D1.md'), markdown);
    repo.commit('import approved');

    repo.edit('divergences/AAA-D1.md', (text) => text.replace('origin_name: Origin A', 'origin_name: Somebody Else').replace('  tier: C3', '  tier: C1'));
    repo.edit('federation/AAA-D1.md', (text) => text.replace('  tier: C3', '  tier: C1'));
    expect(refusals(check())).toEqual([
      { file: 'divergences/AAA-D1.md', field: 'provenance.federation.origin_name', rule: 'federation-provenance' },
      { file: 'divergences/AAA-D1.md', field: 'certification', rule: 'certification-unearned' },
      { file: 'federation/AAA-D1.md', field: '(file)', rule: 'federation-provenance' },
    ]);
    writeFileSync(path.join(repo.content, 'federation/AAA-D1.md'), markdown);
    repo.edit('divergences/AAA-D1.md', (text) => text.replace('origin_name: Somebody Else', 'origin_name: Origin A'));
    expect(refusals(check())).toEqual([{ file: 'divergences/AAA-D1.md', field: 'certification', rule: 'certification-unearned' }]);
  });
});
