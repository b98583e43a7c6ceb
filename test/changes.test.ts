/**
 * Issue 45, part 1: what changed since a revision. A real git repository in a temporary folder
 * (test/helpers/git-repo.ts): the fixture committed and built, a divergence record added and a
 * tier changed in two more commits, built again; then GET /api/changes?since=<the first build's
 * corpus_rev> lists exactly those, 304 on its ETag, the static pages agree, and every answer is
 * checked against /openapi.json. Shallow clones, a copy without .git, the cap, the cache, an
 * uncommitted working tree and the revision rule (the loader's files, as git holds them).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { artifactPaths } from '../core/artifacts.ts';
import { changesSince } from '../core/changes.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { loadContent } from '../content-files/load-content.ts';
import { appendDisposition } from '../content-files/tension-dispositions.ts';
import { countsForRevision } from '../content-files/revision.ts';
import { tempDir } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { createHashedEmbedder } from '../devkit/hashed-embedder.ts';
import { ChangesDeltaSchema, ChangesIndexSchema, ChangesPageSchema, type ChangeHistory, type ChangesDelta, type ChangesPage } from '../schemas/api/changes.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { CHANGE_HISTORY_CACHE_FILE, historyLimitFromEnv } from '../scripts/lib/change-history.ts';
import { createContractChecker, type ContractChecker } from './helpers/contract.ts';
import { createTestRepo, git, type TestRepo } from './helpers/git-repo.ts';
import { D1, D9, newRecordFrom } from './helpers/history-builds.ts';

const embedder = createHashedEmbedder();

interface Built {
  app: Express;
  artifactsDir: string;
  rev: string;
  lines: string[];
  contract: ContractChecker;
}

async function build(contentDir: string, cacheDir = tempDir('changes-cache'), historyLimit?: number): Promise<Built> {
  const artifactsDir = tempDir('changes-artifacts');
  const lines: string[] = [];
  await buildArtifacts({ contentDir, artifactsDir, cacheDir, embedder, log: (line) => lines.push(line), ...(historyLimit ? { historyLimit } : {}) });
  const corpus = await loadCorpus(artifactsDir, embedder);
  const app = createApp({ corpus, log: () => {} });
  return { app, artifactsDir, rev: corpus.manifest.published_releases.corpus_rev, lines, contract: await createContractChecker(app) };
}

async function get(built: Built, url: string, headers: Record<string, string> = {}): Promise<request.Response> {
  let pending = request(built.app).get(url);
  for (const [name, value] of Object.entries(headers)) pending = pending.set(name, value);
  const response = await pending;
  built.contract.check('GET', url, response);
  return response;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const readJson = <T>(file: string) => JSON.parse(readFileSync(file, 'utf8')) as T;

/** Every revision the static pages hold, fetched as a reader would: the index, then each page. */
async function pagedHistory(built: Built): Promise<ChangeHistory> {
  const index = ChangesIndexSchema.parse((await get(built, '/changes/index.json')).body);
  const revisions: ChangesPage['revisions'] = [];
  for (const page of index.pages) revisions.push(...ChangesPageSchema.parse((await get(built, page)).body).revisions);
  return { history: index.history, reason: index.reason, current_rev: index.current_rev, oldest_rev: index.oldest_rev, revisions };
}

let repo: TestRepo;
let cacheDir: string;
let first: Built;
let middle: Built;
let last: Built;
const commits: { fixture: string; added: string; tier: string } = { fixture: '', added: '', tier: '' };

beforeAll(async () => {
  repo = createTestRepo();
  commits.fixture = git(repo.root, 'rev-parse', 'HEAD').trim();
  cacheDir = tempDir('changes-cache');
  first = await build(repo.content, cacheDir);
  repo.write(D9, newRecordFrom(repo.read(D1)));
  commits.added = repo.commit('Add TST-D9');
  middle = await build(repo.content, cacheDir);
  repo.edit(D1, (text) => text.replace('tier: C3', 'tier: C1'));
  commits.tier = repo.commit('TST-D1: tier C1');
  last = await build(repo.content, cacheDir);
}, 300_000);

afterAll(() => repo?.dispose());

describe('GET /api/changes?since=<the first build’s corpus_rev>', () => {
  it('lists exactly the two commits: the record added and the tier changed, with their ids, fields and commits', async () => {
    expect(new Set([first.rev, middle.rev, last.rev]).size).toBe(3);
    const response = await get(last, `/api/changes?since=${first.rev}`);
    expect(response.status).toBe(200);
    const delta = ChangesDeltaSchema.parse(response.body);
    expect(delta).toMatchObject({ since: first.rev, current_rev: last.rev, history: 'complete', reason: null, oldest_rev: first.rev, up_to_date: false });
    expect(delta.revisions.map((revision) => [revision.commit, revision.corpus_rev, revision.parent_rev, revision.subject, revision.author])).toEqual([
      [commits.tier, last.rev, middle.rev, 'TST-D1: tier C1', 'Contributor'],
      [commits.added, middle.rev, first.rev, 'Add TST-D9', 'Contributor'],
    ]);
    for (const revision of delta.revisions) expect(Number.isNaN(Date.parse(revision.date!))).toBe(false);
    const sha = (file: string) => sha256(readFileSync(path.join(repo.content, file)));
    expect(delta.added).toEqual([
      {
        id: 'TST-D9',
        kind: 'divergence',
        file: D9,
        content_hash: sha(D9),
        previous_content_hash: null,
        fields: [],
        tier: { from: null, to: 'C0' },
        answers_added: 0,
        annotations_added: 0,
        dispositions_added: [],
        groups: ['new-records'],
        notes: ['TST-D9: "Is a promise kept under pressure still a promise?" (3 answers)'],
        overrides: [],
        commits: [commits.added],
      },
    ]);
    expect(delta.changed).toHaveLength(1);
    expect(delta.changed[0]).toMatchObject({
      id: 'TST-D1',
      kind: 'divergence',
      file: D1,
      content_hash: sha(D1),
      fields: ['certification'],
      tier: { from: 'C3', to: 'C1' },
      answers_added: 0,
      annotations_added: 0,
      commits: [commits.tier],
    });
    // A typed tier without an evidence log is what the change check refuses: named as overridden, not hidden.
    expect(delta.changed[0]!.overrides).toEqual(['certification-unearned']);
    expect(delta.changed[0]!.previous_content_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(delta.changed[0]!.previous_content_hash).not.toBe(delta.changed[0]!.content_hash);
    expect(delta.removed).toEqual([]);
    expect(delta.files).toEqual([]);
    // The content hash is the record twin's.
    const twin = await get(last, '/records/TST-D9.md');
    expect(sha256(Buffer.from(twin.text))).toBe(sha(D9));
  });

  it('answers 304 to If-None-Match with its ETag (weak or strong, in a list), and 200 to another', async () => {
    const url = `/api/changes?since=${first.rev}`;
    const answer = await get(last, url);
    const etag = String(answer.headers.etag);
    expect(etag).toMatch(/^(W\/)?"[\w-]+"$/);
    expect(answer.headers['cache-control']).toBe('no-cache');
    // A script on another origin may read the tag and send it back.
    expect(answer.headers['access-control-expose-headers']).toContain('ETag');
    expect((await request(last.app).options(url)).headers['access-control-allow-headers']).toContain('If-None-Match');
    const strong = etag.replace(/^W\//, '');
    for (const header of [etag, strong, `W/${strong}`, `"other", ${strong}`, '*']) {
      const again = await get(last, url, { 'If-None-Match': header });
      expect(again.status, header).toBe(304);
      expect(again.text ?? '').toBe('');
      expect(String(again.headers.etag).replace(/^W\//, '')).toBe(strong);
    }
    expect((await get(last, url, { 'If-None-Match': '"other"' })).status).toBe(200);
    // Another delta, another tag; the same delta from another app over the same artifacts, the same tag.
    const fromMiddle = await get(last, `/api/changes?since=${middle.rev}`);
    expect(String(fromMiddle.headers.etag).replace(/^W\//, '')).not.toBe(strong);
    const head = await request(last.app).head(url).set('If-None-Match', strong);
    expect(head.status).toBe(304);
  });

  it('from a revision in between: only the later commit; from the current one: up to date, nothing to apply', async () => {
    const fromMiddle = ChangesDeltaSchema.parse((await get(last, `/api/changes?since=${middle.rev}`)).body);
    expect(fromMiddle.revisions.map((revision) => revision.commit)).toEqual([commits.tier]);
    expect(fromMiddle.added).toEqual([]);
    expect(fromMiddle.changed.map((change) => [change.id, change.tier])).toEqual([['TST-D1', { from: 'C3', to: 'C1' }]]);
    const current = ChangesDeltaSchema.parse((await get(last, `/api/changes?since=${last.rev}`)).body);
    expect(current).toMatchObject({ up_to_date: true, revisions: [], added: [], changed: [], removed: [], files: [] });
    // The first build, asked from its own revision, is up to date too.
    expect((await get(first, `/api/changes?since=${first.rev}`)).body).toMatchObject({ up_to_date: true, history: 'complete' });
  });

  it('the static pages agree with the route: the same revisions, and the same delta computed from them', async () => {
    const paged = await pagedHistory(last);
    expect(paged).toEqual(readJson<ChangeHistory>(artifactPaths(last.artifactsDir).changes));
    expect(paged.revisions.map((revision) => revision.commit)).toEqual([commits.tier, commits.added, commits.fixture]);
    expect(paged.revisions.map((revision) => revision.corpus_rev)).toEqual([last.rev, middle.rev, first.rev]);
    const index = (await get(last, '/changes/index.json')).body;
    expect(index).toMatchObject({ history: 'complete', current_rev: last.rev, oldest_rev: first.rev, revisions: 3, pages: ['/changes/page-1.json'] });
    for (const since of [first.rev, middle.rev, last.rev]) {
      const outcome = changesSince(paged, since) as { kind: 'delta'; delta: ChangesDelta };
      expect(outcome.kind).toBe('delta');
      expect((await get(last, `/api/changes?since=${since}`)).body).toEqual(outcome.delta);
    }
    // The fixture's own commit: every record added from nothing.
    const root = paged.revisions[2]!;
    expect(root.added.map((change) => change.id)).toEqual(expect.arrayContaining(['TST-D1', 'TST-D2', 'refusal', 'craft', 'harbour-talk']));
    expect(root.added.find((change) => change.id === 'refusal')?.kind).toBe('concept');
    expect(root.files.map((file) => file.file)).toEqual(expect.arrayContaining(['models.yaml', 'site.yaml', 'claims.yaml', 'audio/harbour-talk.wav']));
    expect((await get(last, '/changes/page-2.json')).status).toBe(404);
  });

  it('an unknown revision is 404 REVISION_NOT_FOUND naming the oldest it knows; since missing or malformed is 400', async () => {
    const unknown = await get(last, '/api/changes?since=0123456789abcdef');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'REVISION_NOT_FOUND', retryable: false, suggested_next_call: { method: 'GET', path: '/api/manifest' } });
    expect(unknown.body.error.message).toContain(first.rev);
    expect(unknown.body.error.agent_action).toContain(first.rev);
    expect(unknown.body.error.details).toMatchObject({ since: '0123456789abcdef', oldest_rev: first.rev, current_rev: last.rev, history: 'complete' });
    // Its suggestion succeeds (test/suggested-next-call.test.ts leaves this code to this file).
    expect((await get(last, unknown.body.error.suggested_next_call.path)).status).toBe(200);
    const cases: [string, number, string][] = [
      ['/api/changes', 400, 'PARAM_MISSING'],
      ['/api/changes?since=', 400, 'PARAM_MISSING'],
      ['/api/changes?since=tip', 400, 'INVALID_PARAMETER'],
      [`/api/changes?since=${first.rev.toUpperCase()}`, 400, 'INVALID_PARAMETER'],
      [`/api/changes?since=${first.rev}0`, 400, 'INVALID_PARAMETER'],
      [`/api/changes?since=${first.rev}&since=${middle.rev}`, 400, 'PARAM_REPEATED'],
      [`/api/changes?since=${first.rev}&page=2`, 400, 'UNKNOWN_PARAMETER'],
    ];
    for (const [url, status, code] of cases) {
      const response = await get(last, url);
      expect([response.status, response.body.error?.code], url).toEqual([status, code]);
    }
    // The suggestion of a refused since is a call that succeeds: the current revision.
    const refused = await get(last, '/api/changes?since=tip');
    expect(refused.body.error.suggested_next_call).toEqual({ method: 'GET', path: '/api/changes', query: { since: last.rev } });
    // Surrounding space is not part of a revision.
    expect((await get(last, `/api/changes?since=%20${first.rev}%20`)).status).toBe(200);
    // Conditional headers never turn another API answer into a 304.
    const manifest = await request(last.app).get('/api/manifest').set('If-None-Match', '*');
    expect(manifest.status).toBe(200);
  });

  it('a rebuild reads only the new commits: the older ones come from the cache', () => {
    expect(first.lines).toContain('change history: 1 commits of the content folder (0 from the cache)');
    expect(middle.lines).toContain('change history: 2 commits of the content folder (1 from the cache)');
    expect(last.lines).toContain('change history: 3 commits of the content folder (2 from the cache)');
    const cache = readJson<{ entries: Record<string, unknown> }>(path.join(cacheDir, CHANGE_HISTORY_CACHE_FILE));
    expect(Object.keys(cache.entries).sort()).toEqual([commits.fixture, commits.added, commits.tier].map((commit) => `${commit}:content/`).sort());
  });
});

describe('the revision a commit has is the one a build of it printed', () => {
  it('the revision counts exactly the files the loader reads (fixture and the demo content)', () => {
    for (const dir of [repo.content, path.join(REPO_ROOT, 'content')]) {
      const everything = readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
      const loaded = loadContent(dir).files.map((file) => file.file);
      expect(everything.filter(countsForRevision).sort()).toEqual([...loaded].sort());
      expect(everything.length).toBeGreaterThan(loaded.length);
    }
  });

  it('an uncommitted working tree is listed first, without a commit, at the revision the build printed', async () => {
    const copy = tempDir('changes-dirty');
    execFileSync('git', ['clone', '-q', repo.root, copy]);
    const d2 = path.join(copy, 'content', 'divergences', 'TST-D2.md');
    const annotation = "annotations:\n  - date: '2026-02-01'\n    author: curator\n    status: open\n    note: Read again.\n";
    writeFileSync(d2, readFileSync(d2, 'utf8').replace('tensions:', `${annotation}tensions:`));
    const dirty = await build(path.join(copy, 'content'));
    const history = readJson<ChangeHistory>(artifactPaths(dirty.artifactsDir).changes);
    expect(history.revisions[0]).toMatchObject({ commit: null, date: null, author: null, corpus_rev: dirty.rev, parent_rev: last.rev });
    expect(history.revisions[0]!.changed).toMatchObject([{ id: 'TST-D2', fields: ['annotations'], annotations_added: 1, groups: ['annotations'] }]);
    const delta = ChangesDeltaSchema.parse((await get(dirty, `/api/changes?since=${middle.rev}`)).body);
    expect(delta.revisions.map((revision) => revision.commit)).toEqual([null, commits.tier]);
    expect(delta.changed.map((change) => [change.id, change.commits])).toEqual([
      ['TST-D1', [commits.tier]],
      ['TST-D2', []],
    ]);
  });
});

describe('a merged pull request', () => {
  it('is its merge commit: what the branch changed (an answer, an annotation, a disposition), against the first parent', async () => {
    const merged = createTestRepo();
    try {
      git(merged.root, 'checkout', '-q', '-b', 'pr');
      const answer = '  - model: Alder\n    model_id: alder-2\n    date: 2025-08-01T10:00:00Z\n    text: Ownership is a practice.\n';
      const annotation = '  - date: 2025-08-02\n    author: curator\n    status: open\n    note: An answer appended.\n';
      merged.edit(D1, (text) => text.replace('tensions:', `${answer}tensions:`).replace('---\n\n## Shared', `${annotation}---\n\n## Shared`));
      merged.commit('Re-ask Alder');
      appendDisposition(merged.content, 'alder__birch__ownership-of-refusal', { kind: 'held', by: 'ana', at: '2026-02-01T10:00:00Z', reason: 'Both live.' });
      merged.commit('Hold the tension');
      git(merged.root, 'checkout', '-q', 'main');
      writeFileSync(path.join(merged.root, 'README.md'), 'Outside the content.\n');
      merged.commit('A change outside the content');
      git(merged.root, 'merge', '-q', '--no-ff', 'pr', '-m', 'Merge pull request #1');
      const built = await build(merged.content);
      const history = readJson<ChangeHistory>(artifactPaths(built.artifactsDir).changes);
      expect(history.revisions.map((revision) => revision.subject)).toEqual(['Merge pull request #1', 'fixture content']);
      const [pr] = history.revisions;
      expect(pr!.corpus_rev).toBe(built.rev);
      expect(pr!.changed).toMatchObject([
        { id: 'TST-D1', fields: ['annotations', 'answers'], answers_added: 1, annotations_added: 1, tier: null, groups: ['new-answers', 'annotations'] },
      ]);
      expect(pr!.added).toMatchObject([
        {
          id: 'alder__birch__ownership-of-refusal',
          kind: 'tension',
          file: 'tensions/alder__birch__ownership-of-refusal.yaml',
          dispositions_added: ['held'],
          groups: ['dispositions'],
        },
      ]);
    } finally {
      merged.dispose();
    }
  });
});

describe('without the whole history', () => {
  it('a copy without .git: the build says history is unavailable, the index says so, the route will not guess', async () => {
    const copy = tempDir('changes-tarball');
    cpSync(repo.content, copy, { recursive: true });
    const tarball = await build(copy);
    expect(tarball.rev).toBe(last.rev);
    expect(tarball.lines.some((line) => /^change history unavailable: the content folder is not in a git repository/.test(line))).toBe(true);
    const index = (await get(tarball, '/changes/index.json')).body;
    expect(index).toMatchObject({ history: 'unavailable', current_rev: last.rev, oldest_rev: null, revisions: 0, pages: ['/changes/page-1.json'] });
    expect(index.reason).toMatch(/not in a git repository/);
    // The one page the index names is there, empty: a reader following it finds nothing listed, not a 404.
    expect((await get(tarball, '/changes/page-1.json')).body).toMatchObject({ page: 1, pages: 1, revisions: [], previous: null, next: null });
    const refused = await get(tarball, `/api/changes?since=${first.rev}`);
    expect(refused.status).toBe(404);
    expect(refused.body.error).toMatchObject({ code: 'HISTORY_UNAVAILABLE', retryable: false, details: { history: 'unavailable', current_rev: last.rev } });
    expect(refused.body.error.message).toMatch(/without git history/);
    // Its own revision is still a fact it knows: nothing to apply.
    expect((await get(tarball, `/api/changes?since=${last.rev}`)).body).toMatchObject({ up_to_date: true, history: 'unavailable', revisions: [] });
    // The fixture as test apps build it (a temporary folder, no git at all): the same.
    const plain = await build(writeFixtureContent());
    expect((await get(plain, '/changes/index.json')).body).toMatchObject({ history: 'unavailable', revisions: 0 });
  });

  it('a shallow clone of one commit: unavailable; of two: truncated, starting where the fetched history starts', async () => {
    const one = tempDir('changes-shallow-1');
    execFileSync('git', ['clone', '-q', '--depth=1', `file://${repo.root}`, one]);
    const shallow = await build(path.join(one, 'content'));
    expect(shallow.rev).toBe(last.rev);
    expect((await get(shallow, '/changes/index.json')).body).toMatchObject({
      history: 'unavailable',
      reason: expect.stringMatching(/shallow clone/),
      revisions: 0,
    });
    expect((await get(shallow, `/api/changes?since=${middle.rev}`)).body.error.code).toBe('HISTORY_UNAVAILABLE');

    const two = tempDir('changes-shallow-2');
    execFileSync('git', ['clone', '-q', '--depth=2', `file://${repo.root}`, two]);
    const partial = await build(path.join(two, 'content'));
    expect((await get(partial, '/changes/index.json')).body).toMatchObject({
      history: 'truncated',
      reason: expect.stringMatching(/shallow clone/),
      oldest_rev: middle.rev,
      revisions: 1,
    });
    expect((await get(partial, `/api/changes?since=${middle.rev}`)).body.revisions.map((revision: { commit: string }) => revision.commit)).toEqual([
      commits.tier,
    ]);
    const older = await get(partial, `/api/changes?since=${first.rev}`);
    expect(older.body.error).toMatchObject({ code: 'REVISION_NOT_FOUND', details: { oldest_rev: middle.rev, history: 'truncated' } });
  });

  it('the cap (CHANGES_HISTORY_LIMIT) reads the newest commits only, and says the list is truncated', async () => {
    const capped = await build(repo.content, tempDir('changes-cap-cache'), 2);
    expect((await get(capped, '/changes/index.json')).body).toMatchObject({
      history: 'truncated',
      reason: expect.stringMatching(/newest 2 commits/),
      oldest_rev: first.rev,
      revisions: 2,
    });
    expect((await get(capped, `/api/changes?since=${first.rev}`)).status).toBe(200);
    const one = await build(repo.content, tempDir('changes-cap-cache'), 1);
    expect((await get(one, `/api/changes?since=${first.rev}`)).body.error.code).toBe('REVISION_NOT_FOUND');
    // The setting: a whole number of commits, at least one; anything else fails with its name.
    expect(historyLimitFromEnv({})).toBeUndefined();
    expect(historyLimitFromEnv({ CHANGES_HISTORY_LIMIT: '20' })).toBe(20);
    for (const value of ['0', '-1', '2.5', 'many']) expect(() => historyLimitFromEnv({ CHANGES_HISTORY_LIMIT: value })).toThrow(/CHANGES_HISTORY_LIMIT/);
  });

  it('a cache that cannot be read is read again from git, with the same answer', async () => {
    const broken = tempDir('changes-broken-cache');
    writeFileSync(path.join(broken, CHANGE_HISTORY_CACHE_FILE), '{"format": "polyphony-change-history@1", "entries": ');
    const rebuilt = await build(repo.content, broken);
    expect(rebuilt.lines).toContain('change history: 3 commits of the content folder (0 from the cache)');
    expect(readJson(artifactPaths(rebuilt.artifactsDir).changes)).toEqual(readJson(artifactPaths(last.artifactsDir).changes));
  });
});
