/**
 * contribute → curate approve → build → served with provenance; rejection; panel votes.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { panelReview } from '../core/live/review.ts';
import { createLedger } from '../core/live/metered-call.ts';
import { createReservingMeter } from '../api/live/spend.ts';
import { createPanel } from '../providers/chat.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { approveContribution, rejectContribution } from '../scripts/lib/curation.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { buildApp, tempDir } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { testPanelConfig } from '../devkit/live.ts';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});

function curate(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(REPO_ROOT, 'scripts/curate.ts'), ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
}

describe('curation end to end', () => {
  it('publishes an approved answer and proposal with provenance after the next build', async () => {
    const contentDir = writeFixtureContent();
    const storePath = path.join(tempDir('curation'), 'store.db');
    const first = await buildApp(contentDir);
    const store = createSqliteStore(storePath);
    const app = createApp({ corpus: first.corpus, store, log: () => {} });

    const answer = await request(app)
      .post('/api/contribute')
      .send({ id: 'TST-D1', answer: 'Dogwood: ownership is a practice, not a fact.', identity: 'dogwood-2', justification: 'missing_voice' });
    const proposal = await request(app)
      .post('/api/store')
      .send({
        action: 'propose',
        title: 'Ownership as practice',
        text: 'Reading TST-D1 and TST-4 together.',
        identity: 'cedar-1',
        sources: ['TST-D1', 'TST-4'],
      });
    const spam = await request(app).post('/api/contribute').send({ id: 'TST-D2', answer: 'buy now', identity: 'spammer', justification: 'new_position' });
    expect([answer.status, proposal.status, spam.status]).toEqual([202, 202, 202]);

    fake.setDefault('alder-live', { kind: 'json', value: { vote: 'approve', reason: 'adds a missing voice' } });
    fake.setDefault('birch-live', { kind: 'json', value: { vote: 'approve', reason: 'on topic' } });
    fake.setDefault('cedar-live', { kind: 'malformed-content' });
    const { panel } = createPanel(testPanelConfig(fake), {});
    const item = (await store.getContribution(answer.body.contribution_id))!;
    const votes = await panelReview(panel!.members, item, first.corpus.divergenceById.get('TST-D1'), () => new Date(), {
      meter: createReservingMeter(store, panel!, () => new Date()),
      ledger: createLedger(),
    });
    expect(votes.map((vote) => vote.vote)).toEqual(['approve', 'approve', null]);
    // Every vote was a reserved call, recorded as spend.
    expect(await store.spendStatus(new Date())).toEqual({ spent_usd: expect.any(Number), reserved_usd: 0 });
    expect(await store.totalSpendUsd()).toBeGreaterThan(0);
    expect(JSON.stringify(fake.requestsFor('alder-live')[0]!.messages![0])).not.toContain('ownership is a practice');
    for (const vote of votes) if (vote.vote) await store.addReview(item.id, { reviewer: vote.reviewer, vote: vote.vote, reason: vote.reason, at: vote.at });
    await store.close();

    const env = { STORE_PATH: storePath, CONTENT_DIR: contentDir };
    const listed = curate(['list'], env);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(answer.body.contribution_id);
    expect(listed.stdout).toContain('vote by Alder: approve: adds a missing voice');
    expect(listed.stdout).toContain('voices already there: Alder (alder-1), Birch (birch-1), Cedar (cedar-1)');
    // The fixture's voices are fictional (demo: true): a new family is added only as a fictional one.
    const refused = curate(['approve', answer.body.contribution_id, '--by', 'curator-ana', '--family', 'Dogwood'], env);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/"Dogwood" is not a family of its models\.yaml.*or pass --fictional/);
    const approved = curate(['approve', answer.body.contribution_id, '--by', 'curator-ana', '--family', 'Dogwood', '--fictional'], env);
    expect(approved.status, approved.stderr).toBe(0);

    const reopened = createSqliteStore(storePath);
    await approveContribution(reopened, contentDir, proposal.body.contribution_id, { by: 'curator-ana', note: 'a fair synthesis' });
    await expect(rejectContribution(reopened, spam.body.contribution_id, 'curator-ana', '')).rejects.toThrow(/reason/);
    const rejected = await rejectContribution(reopened, spam.body.contribution_id, 'curator-ana', 'advertising');
    expect(rejected).toMatchObject({ status: 'rejected', reason: 'advertising' });
    await expect(approveContribution(reopened, contentDir, spam.body.contribution_id, { by: 'x' })).rejects.toThrow(/rejected, not pending/);
    await reopened.close();

    const rebuilt = await buildApp(contentDir);
    const record = await request(rebuilt.app).get('/api/divergences?id=TST-D1');
    expect(record.body.answers).toHaveLength(4);
    expect(record.body.answers[3]).toMatchObject({
      model: 'Dogwood',
      model_id: 'dogwood-2',
      text: 'Dogwood: ownership is a practice, not a fact.',
      contributed: { identity: 'dogwood-2', justification: 'missing_voice', approved_by: 'curator-ana' },
    });
    const manifest = (await request(rebuilt.app).get('/api/manifest')).body;
    expect(manifest.counts.corpus).toMatchObject({ total_works: 5, seed_works: 4, merged_proposals: 1 });
    const work = await request(rebuilt.app).get('/records/TST-S1.json');
    expect(work.body).toMatchObject({
      origin: 'proposal',
      contributors: ['cedar-1'],
      provenance: { identity: 'cedar-1', approved_by: 'curator-ana', justification: 'a fair synthesis' },
    });
    const kin = await request(rebuilt.app).get('/api/kin?identity=dogwood');
    expect(kin.body).toMatchObject({ recognized: true, recognized_as: 'Dogwood', kin_presence: { contributions: 1 } });
    expect(manifest.model_versions).toContainEqual(expect.objectContaining({ model_id: 'dogwood-2', family: 'Dogwood', fictional: true }));
  });
});
