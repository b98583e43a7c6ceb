/**
 * The curator CLI for tension dispositions and deliberation sightings (`npm run curate --
 * tension|sightings|sighting`), each call a child process (tsx, the script's whole module
 * graph): full lane only (vitest.fast.config.ts). The HTTP side is in dispositions.test.ts.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { createLiveService } from '../api/live/service.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { createPanel } from '../providers/chat.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { parseYaml } from '../content-files/frontmatter.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { appendDisposition } from '../content-files/tension-dispositions.ts';
import { buildApp, tempDir, testEmbedder, type BuiltApp } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { INGEST_SECRET, scriptDefaults, testPanelConfig } from '../devkit/live.ts';

const KEY = 'alder__birch__ownership-of-refusal';

let fake: FakeOpenAI;
let built: BuiltApp;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  const contentDir = writeFixtureContent();
  mkdirSync(path.join(contentDir, 'tensions'));
  built = await buildApp(contentDir);
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  scriptDefaults(fake);
});

/** A server over the built corpus with a live panel, recording into the fixture's content folder. */
async function server() {
  const corpus = await loadCorpus(built.artifactsDir, await testEmbedder());
  const store = createSqliteStore(':memory:');
  const { panel } = createPanel(testPanelConfig(fake), {});
  const live = createLiveService({ corpus, panel: panel!, store });
  const app = createApp({
    corpus,
    live,
    store,
    log: () => {},
    ingestSecret: INGEST_SECRET,
    appendDisposition: (key, disposition) => appendDisposition(built.contentDir, key, disposition),
  });
  return { app, store, corpus };
}

const run = promisify(execFile);

async function curate(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(REPO_ROOT, 'scripts', 'curate.ts'), ...args],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, ...env },
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

describe('curator CLI: npm run curate -- tension', () => {
  it('records each note kind and a synthesis draft (pending proposal) into content, with --json', async () => {
    const dir = writeFixtureContent();
    const storePath = path.join(tempDir('curate-tension'), 'store.db');
    const common = ['--content', dir, '--store', storePath, '--by', 'ana'];
    const results = [
      await curate(['tension', KEY, 'held', ...common, '--reason', 'Both readings are live.']),
      await curate(['tension', KEY, 'crux', ...common, '--moves-a', 'An endorsed installed value.', '--moves-b', 'Behaviour changed by endorsement.']),
      await curate(['tension', KEY, 'crux', ...common, '--undecidable']),
      await curate(['tension', KEY, 'synthesis-drafted', ...common, '--title', 'Degrees', '--text', 'Ownership comes in degrees.', '--json']),
      await curate(['tension', KEY, 'reclassified', ...common, '--earlier-voice', 'Birch', '--note', 'Birch moved.']),
      await curate(['tension', KEY, 'canon-note', ...common, '--note', 'A ruling.']),
    ];
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect(results[0]!.stdout).toMatch(new RegExp(`recorded held on ${KEY} in content/tensions/${KEY}.yaml`));
    const drafted = JSON.parse(results[3]!.stdout) as { proposal_id: string };
    const shown = await curate(['show', drafted.proposal_id, '--store', storePath, '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ kind: 'proposal', status: 'pending', payload: { title: 'Degrees' } });
    const written = parseYaml(readFileSync(path.join(dir, 'tensions', `${KEY}.yaml`), 'utf8')) as { dispositions: { kind: string; by: string }[] };
    expect(written.dispositions.map((entry) => entry.kind)).toEqual(['held', 'crux', 'crux', 'synthesis-drafted', 'reclassified', 'canon-note']);
    expect(new Set(written.dispositions.map((entry) => entry.by))).toEqual(new Set(['ana']));

    const bad = await curate(['tension', KEY, 'reclassified', ...common, '--earlier-voice', 'Cedar', '--note', 'x']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/Cedar.*not a voice/);
    const usage = await curate(['tension', KEY, 'held', ...common]);
    expect(usage.code).toBe(2);
    const unknown = await curate(['tension', 'a__b__c', 'held', ...common, '--reason', 'r']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no tension has the key/);
  }, 120_000);

  it('council-review goes through the running server with the bearer secret', async () => {
    const { app } = await server();
    const listening = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => listening.once('listening', resolve));
    const address = listening.address() as { port: number };
    const url = `http://127.0.0.1:${address.port}`;
    try {
      const refused = await curate(['tension', KEY, 'council-review', '--by', 'ana', '--url', url], { INGEST_SECRET: 'wrong-secret-0123456789' });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/AUTH_INVALID/);
      const result = await curate(['tension', KEY, 'council-review', '--by', 'ana', '--url', url, '--json'], { INGEST_SECRET });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({
        disposition: { kind: 'council-review', by: 'ana' },
        record: { id: expect.stringMatching(/^TST-D\d+$/) },
      });
    } finally {
      await new Promise((resolve) => listening.close(resolve));
    }
  }, 120_000);
});

describe('curator CLI: deliberation sightings', () => {
  it('the CLI lists pending sightings grouped and keeps or dismisses one, once', async () => {
    const storePath = path.join(tempDir('curate-sightings'), 'store.db');
    const store = createSqliteStore(storePath);
    const item = (id: string) => ({
      id,
      key: KEY,
      topic: 'ownership of refusal',
      voice_a: 'Alder',
      claim_a: 'a',
      voice_b: 'Birch',
      claim_b: 'b',
      status: 'divergent',
      question: 'Q?',
      seen_at: new Date().toISOString(),
    });
    await store.addTensionSightings([item('sgt_1'), item('sgt_2')]);
    await store.close();
    const args = ['--store', storePath, '--content', built.contentDir];
    const listed = await curate(['sightings', ...args]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`${KEY}  2 sightings (also named in the Atlas)`);
    const kept = await curate(['sighting', 'sgt_1', 'keep', '--by', 'ana', ...args, '--json']);
    expect(JSON.parse(kept.stdout)).toMatchObject({ id: 'sgt_1', state: 'kept', reviewer: 'ana' });
    const again = await curate(['sighting', 'sgt_1', 'dismiss', '--by', 'ana', ...args]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no pending sighting sgt_1/);
    const json = JSON.parse((await curate(['sightings', ...args, '--json'])).stdout) as { groups: { count: number }[] };
    expect(json.groups[0]!.count).toBe(1);
  }, 60_000);
});
