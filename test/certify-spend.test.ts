/**
 * Certification and re-elicitation spend through the store's reservations: the same ceiling
 * as the live paths, shared by every process on the store (issue 15, second increment).
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PanelConfigSchema } from '../providers/panel-config.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import type { Store } from '../storage/store.ts';
import { SpendCeilingError } from '../scripts/lib/certify/spend-guard.ts';
import { createStoreSpendGuard } from '../scripts/lib/certify/store-spend-guard.ts';
import { reelicit, reelicitPanel } from '../scripts/lib/reelicit/reelicit.ts';
import { tempDir } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { scriptWorld } from '../devkit/fake-world.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

let dir: string;
let store: Store;
let fake: FakeOpenAI;
const at = new Date('2026-11-24T12:00:00Z');
const guardOf = (ceilingUsd: number, budgetUsd = Infinity) =>
  createStoreSpendGuard({ store, ceilingUsd, budgetUsd, callTimeoutMs: 60_000, purpose: 'certify', now: () => at });

beforeAll(async () => {
  dir = tempDir('certify-spend');
  store = createSqliteStore(path.join(dir, 'store.db'));
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await store.close();
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

it("counts live spend and another process's reservations against the one ceiling, and records settled calls in the store", async () => {
  // The live paths already spent $0.90 of a $1 ceiling.
  await store.addSpend({ at: at.toISOString(), purpose: 'deliberation', model: 'live-model', prompt_tokens: 1, completion_tokens: 1, cost_usd: 0.9 });
  const guard = guardOf(1);
  await expect(guard.reserve(0.2, 'alder-2')).rejects.toThrow(SpendCeilingError);
  const held = await guard.reserve(0.06, 'alder-2');
  // A second process on the same store sees the hold: 0.90 + 0.06 + 0.06 would cross $1.
  await expect(guardOf(1).reserve(0.06, 'birch-1')).rejects.toThrow(SpendCeilingError);
  await held.settle(0.01, { prompt_tokens: 100, completion_tokens: 50 });
  expect(await store.spendStatus(at)).toEqual({ spent_usd: expect.closeTo(0.91, 10), reserved_usd: 0 });
  expect(guard.spentUsd()).toBeCloseTo(0.01, 10);
  // A released hold costs nothing.
  const released = await guard.reserve(0.05, 'cedar-1');
  await released.release();
  expect((await store.spendStatus(at)).spent_usd).toBeCloseTo(0.91, 10);
  // The invocation's own budget is kept too.
  await expect(guardOf(100, 0.001).reserve(0.01, 'alder-2')).rejects.toThrow(SpendCeilingError);
});

it("a re-elicitation's spend lands in the store at usage × prices", async () => {
  const content = writeFixtureContent();
  const versions = { Alder: 'alder-2', Birch: 'birch-1', Cedar: 'cedar-1' };
  scriptWorld(fake, () => ({}), versions, [], { prompt_tokens: 1000, completion_tokens: 500 });
  const config = PanelConfigSchema.parse({
    panel: Object.entries(versions).map(([name, model]) => ({
      name,
      family: name,
      lab: `${name} Lab (fictional)`,
      model,
      base_url: fake.baseURL,
      price: { input_per_mtok: 1, output_per_mtok: 2 },
    })),
    chair: { use: 'Alder' },
    defaults: { max_retries: 0, max_tokens: 300 },
  });
  const before = (await store.spendStatus(at)).spent_usd;
  const report = await reelicit({ contentDir: content, selection: { ids: ['TST-D1'] }, panel: reelicitPanel(config, {}), guard: guardOf(100), now: () => at });
  expect(report.records[0]!.error).toBeUndefined();
  expect(report.spentUsd).toBeCloseTo((3 * (1000 * 1 + 500 * 2)) / 1e6, 12);
  expect((await store.spendStatus(at)).spent_usd - before).toBeCloseTo(report.spentUsd, 12);
  rmSync(content, { recursive: true, force: true });
});
