/**
 * Contract fuzzing of the write operations (issue 13) on BOTH store drivers: POST
 * /api/contribute, POST /api/store, and job submission on POST and GET /api/query (with
 * polling), against an app whose panel talks to the fake OpenAI server, write and live limits
 * open, every request within the contract and no 5xx at all. Hostile unicode (NUL, lone
 * surrogates) in every string must get the same documented answer from SQLite and PostgreSQL.
 * Every other operation with a body (council, play, dispositions, federation offers, job
 * cancellation, MCP) is fuzzed on both drivers too (issue 26), with fewer requests: hostile
 * text combined with extreme nesting and size, every header twice, no 5xx.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveService } from '../../api/live/service.ts';
import type { Store } from '../../storage/store.ts';
import { buildApp, type BuiltApp } from '../../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../devkit/fake-openai.ts';
import { writeFixtureContent } from '../../devkit/fixture-content.ts';
import { FuzzStats, type FuzzConfig, type FuzzContext, type Operation } from '../helpers/fuzz.ts';
import { createLiveApp, INGEST_SECRET, scriptDefaults, testPanelConfig } from '../../devkit/live.ts';
import { appendDisposition } from '../../content-files/tension-dispositions.ts';
import { writeStoreDrivers } from '../helpers/write-stores.ts';
import { contextFor, describeOperations, documentedBodyOperationIds, type FuzzEnvironment } from './suite.ts';

const HOUR = 3_600_000;
const OPEN = { limit: 1_000_000, windowMs: HOUR };
const LIMITS = { contribute: OPEN, live: OPEN, liveGlobal: OPEN, council: OPEN, councilGlobal: OPEN };
const WRITE_OPERATIONS = ['contribute', 'store', 'queryPost', 'query'];
/** The other operations that take a body: every one is fuzzed on both drivers. */
const OTHER_BODY_OPERATIONS = documentedBodyOperationIds().filter((id) => !WRITE_OPERATIONS.includes(id));
const OTHER_RUNS_PER_SEED = 100;

const { drivers, stop } = writeStoreDrivers();
let built: BuiltApp;
let fake: FakeOpenAI;
let contentDir: string;

beforeAll(async () => {
  contentDir = writeFixtureContent();
  [built, fake] = await Promise.all([buildApp(contentDir), startFakeOpenAI()]);
  scriptDefaults(fake);
}, 120_000);
afterAll(async () => {
  await fake?.close();
  await stop();
});

for (const driver of drivers) {
  describe.skipIf(!driver.available)(`writes on ${driver.name}`, () => {
    const config: FuzzConfig = { name: `writes-${driver.name}`, live: true, ingestSecret: INGEST_SECRET, expected5xx: () => false };
    const stats = new FuzzStats();
    /** Error codes answered, per operation: the hostile cases must reach the text rule. */
    const codes = new Map<string, Map<string, number>>();
    let store: Store;
    let live: LiveService;
    let environment: FuzzEnvironment;
    let context: FuzzContext;
    let operations: Operation[];

    beforeAll(async () => {
      store = await driver.open();
      // Dispositions land in the fixture's content folder, so recordDisposition can answer 201.
      const app = createLiveApp(built.corpus, store, testPanelConfig(fake), undefined, LIMITS, {
        appendDisposition: (key, disposition) => appendDisposition(contentDir, key, disposition),
      });
      live = app.live;
      const server: Server = app.app.listen(0, '127.0.0.1');
      await once(server, 'listening');
      environment = {
        app: app.app,
        server,
        corpus: built.corpus,
        config,
        internalPaths: [contentDir, built.artifactsDir],
        observe: (fuzzCase, observed) => {
          const code = (observed.json as { error?: { code?: string } } | undefined)?.error?.code;
          if (!code) return;
          const counts = codes.get(fuzzCase.operation) ?? new Map<string, number>();
          counts.set(code, (counts.get(code) ?? 0) + 1);
          codes.set(fuzzCase.operation, counts);
        },
      };
      ({ context, operations } = await contextFor(environment));
    }, 120_000);

    afterAll(async () => {
      await live?.runner.idle();
      environment?.server.close();
      await store?.close();
    });

    describeOperations(`write operations on ${driver.name}`, WRITE_OPERATIONS, () => ({ context, environment, operations, stats }));
    describeOperations(`other operations with a body on ${driver.name}`, OTHER_BODY_OPERATIONS, () => ({ context, environment, operations, stats }), {
      runs: OTHER_RUNS_PER_SEED,
    });

    describe('coverage', () => {
      it('every write operation reached a 2xx, and hostile text reached the text rule (400 INVALID_TEXT), never a 5xx', () => {
        for (const id of WRITE_OPERATIONS) {
          const statuses = [...(stats.perOperation.get(id)?.statuses.keys() ?? [])];
          expect(
            statuses.some((status) => status >= 200 && status < 300),
            `${id} reached a 2xx`,
          ).toBe(true);
          expect(
            statuses.filter((status) => status >= 500),
            `${id} answered no 5xx`,
          ).toEqual([]);
        }
        for (const id of ['contribute', 'store', 'queryPost'])
          expect(codes.get(id)?.get('INVALID_TEXT') ?? 0, `${id}: INVALID_TEXT answers`).toBeGreaterThan(0);
      });

      it('every operation with a body was fuzzed, answered no 5xx, and its over-deep hostile bodies reached BODY_TOO_DEEP', () => {
        expect(OTHER_BODY_OPERATIONS.length).toBeGreaterThan(3);
        for (const id of [...WRITE_OPERATIONS.filter((write) => write !== 'query'), ...OTHER_BODY_OPERATIONS]) {
          const entry = stats.perOperation.get(id);
          expect(entry?.requests ?? 0, `${id} was fuzzed`).toBeGreaterThan(0);
          expect(
            [...(entry?.statuses.keys() ?? [])].filter((status) => status >= 500),
            `${id} answered no 5xx`,
          ).toEqual([]);
          expect(entry?.categories.get('hostile-deep') ?? 0, `${id}: hostile-deep cases`).toBeGreaterThan(0);
          expect(entry?.categories.get('repeated-headers') ?? 0, `${id}: repeated-headers cases`).toBeGreaterThan(0);
          if (id !== 'mcpPost') expect(codes.get(id)?.get('BODY_TOO_DEEP') ?? 0, `${id}: BODY_TOO_DEEP answers`).toBeGreaterThan(0);
        }
      });

      it('the fuzz stored contributions and submitted jobs that it then polled', async () => {
        expect((await store.listContributions()).length).toBeGreaterThan(5);
        expect(context.jobIds.length).toBeGreaterThan(5);
      });
    });
  });
}
