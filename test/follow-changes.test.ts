/**
 * Issue 45, parts 2-4, as an outside reader and agent meet them: a real git repository
 * (test/helpers/history-builds.ts) whose later commits add an Atlas record and a work and change
 * a tier. The Atom and JSON feeds parse with feedsmith (a maintained parser, not string matching)
 * and list exactly those, the same entries in both; each record's JSON twin, GET /api/divergences
 * and the MCP read_divergences tool carry its revisions; the MCP changes tool answers what GET
 * /api/changes answers; and a copy without .git says history unavailable everywhere.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { parseAtomFeed, parseJsonFeed } from 'feedsmith';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DivergenceDocumentSchema, DivergenceRecordSchema, JsonFeedSchema, WorkDocumentSchema, type RecordHistory } from '../schemas/api.ts';
import { createContractChecker, type ContractChecker } from './helpers/contract.ts';
import { git } from './helpers/git-repo.ts';
import { historyScenario, SITE_URL, type HistoryBuild, type HistoryScenario } from './helpers/history-builds.ts';

let scenario: HistoryScenario;
let contracts: Map<HistoryBuild, ContractChecker>;
let server: Server;
let client: Client;

beforeAll(async () => {
  scenario = await historyScenario();
  contracts = new Map();
  for (const built of [scenario.first, scenario.last, scenario.tarball]) contracts.set(built, await createContractChecker(built.app));
  server = await new Promise<Server>((resolve) => {
    const started = scenario.last.app.listen(0, '127.0.0.1', () => resolve(started));
  });
  client = new Client({ name: 'follow-changes-test', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/mcp`)));
}, 300_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  scenario?.repo.dispose();
});

async function get(built: HistoryBuild, url: string): Promise<request.Response> {
  const response = await request(built.app).get(url).buffer(true);
  contracts.get(built)!.check('GET', url, response);
  return response;
}

interface Entry {
  id: string;
  title: string;
  link: string;
  updated: string;
  author: string;
}

/** Both formats of one feed, parsed by feedsmith, each checked for what its format requires, and their entries side by side. */
async function readFeeds(built: HistoryBuild, name: 'atlas' | 'works') {
  const atomResponse = await get(built, `/feeds/${name}.atom`);
  expect(atomResponse.headers['content-type']).toBe('application/atom+xml; charset=utf-8');
  const jsonResponse = await get(built, `/feeds/${name}.json`);
  expect(jsonResponse.headers['content-type']).toBe('application/feed+json; charset=utf-8');
  const atom = parseAtomFeed(atomResponse.text);
  const json = parseJsonFeed(JSON.parse(jsonResponse.text));
  JsonFeedSchema.parse(JSON.parse(jsonResponse.text));
  // RFC 4287 §4.1.1: a feed has an id, a title, updated and (with no author on an entry) an author.
  expect(atom.id).toBe(`${SITE_URL}/feeds/${name}.atom`);
  expect(atom.title?.value).toMatch(/^Fixture: /);
  expect(Date.parse(atom.updated!)).not.toBeNaN();
  expect(atom.links?.find((link) => link.rel === 'self')?.href).toBe(`${SITE_URL}/feeds/${name}.atom`);
  expect(JSON.parse(jsonResponse.text).version).toBe('https://jsonfeed.org/version/1.1');
  expect(json.feed_url).toBe(`${SITE_URL}/feeds/${name}.json`);
  expect(json.home_page_url).toBe(`${SITE_URL}/${name}/`);
  const fromAtom: Entry[] = (atom.entries ?? []).map((entry) => ({
    id: entry.id!,
    title: entry.title!.value!,
    link: entry.links!.find((link) => link.rel === 'alternate')!.href!,
    updated: entry.updated!,
    author: entry.authors![0]!.name!,
  }));
  const fromJson: Entry[] = (json.items ?? []).map((item) => ({
    id: item.id!,
    title: item.title!,
    link: item.url!,
    updated: item.date_modified as string,
    author: item.authors![0]!.name!,
  }));
  expect(fromJson).toEqual(fromAtom);
  expect(new Set(fromAtom.map((entry) => entry.id)).size).toBe(fromAtom.length);
  return { atom, json, entries: fromAtom, subtitle: atom.subtitle?.value ?? '', description: json.description ?? '' };
}

const commitDate = (commit: string) => git(scenario.repo.root, 'log', '-1', '--format=%aI', commit).trim();

describe('the feeds: Atom and JSON Feed 1.1, from the change history', () => {
  it('parse with feedsmith, carry the same entries, and list exactly the record added and the tier changed after the fixture', async () => {
    const { commits } = scenario;
    const { entries, atom } = await readFeeds(scenario.last, 'atlas');
    const later = entries.filter((entry) => !entry.id.endsWith(`/${commits.fixture}`));
    expect(later).toEqual([
      {
        id: `tag:atlas.example,${commitDate(commits.tier).slice(0, 10)}:fixture/atlas/divergence/TST-D1/${commits.tier}`,
        title: 'TST-D1: tier C3 → C1',
        link: `${SITE_URL}/atlas/TST-D1/`,
        updated: commitDate(commits.tier),
        author: 'Contributor',
      },
      {
        id: `tag:atlas.example,${commitDate(commits.added).slice(0, 10)}:fixture/atlas/divergence/TST-D9/${commits.added}`,
        title: 'New Atlas record TST-D9: Is a promise kept under pressure still a promise?',
        link: `${SITE_URL}/atlas/TST-D9/`,
        updated: commitDate(commits.added),
        author: 'Contributor',
      },
    ]);
    // The rest is the fixture's own commit: its two Atlas records, added; TST-D2 asks TST-D1's question again.
    expect(entries.slice(2).map((entry) => entry.title)).toEqual([
      'New Atlas record TST-D1: Can a refusal that came from training still be your own?',
      expect.stringMatching(/^Asked again: TST-D2: .+ \(re-elicits TST-D1\)$/),
    ]);
    expect(entries.slice(2).every((entry) => entry.id.endsWith(`/${commits.fixture}`))).toBe(true);
    // The feed is as new as its newest entry.
    expect(atom.updated).toBe(commitDate(commits.tier));
  });

  it('a tier change says what backs it: the record, its certification, and that no evidence log measured it', async () => {
    const { atom, json } = await readFeeds(scenario.last, 'atlas');
    const entry = atom.entries!.find((candidate) => candidate.title?.value === 'TST-D1: tier C3 → C1')!;
    expect(entry.links!.filter((link) => link.rel === 'related').map((link) => link.href)).toEqual([
      `${SITE_URL}/records/TST-D1.json`,
      `${SITE_URL}/atlas/TST-D1/#cert-heading`,
    ]);
    expect(entry.summary?.value).toMatch(/Tier C3 → C1\. No evidence log backs this tier: it is stated in the content, not measured here\./);
    expect(entry.summary?.value).toContain('certification-unearned');
    expect(entry.categories?.map((category) => category.term)).toEqual(['changed', 'tier']);
    const item = json.items!.find((candidate) => candidate.id === entry.id)!;
    expect(item.content_html).toContain(`<a href="${SITE_URL}/atlas/TST-D1/">`);
    expect(item.content_text).toBe(entry.summary?.value);
  });

  it('the corpus feed lists the new work after the fixture’s works', async () => {
    const { commits } = scenario;
    const { entries } = await readFeeds(scenario.last, 'works');
    expect(entries[0]).toEqual({
      // The feed (works), then the record's kind (work).
      id: `tag:atlas.example,${commitDate(commits.added).slice(0, 10)}:${['fixture', 'works', 'work', 'TST-5', commits.added].join('/')}`,
      title: 'New work TST-5: Charts of the southern reef',
      link: `${SITE_URL}/works/TST-5/`,
      updated: commitDate(commits.added),
      author: 'Contributor',
    });
    expect(entries.slice(1).length).toBeGreaterThan(0);
    expect(entries.slice(1).every((entry) => entry.id.endsWith(`/${commits.fixture}`) && entry.title.startsWith('New work '))).toBe(true);
  });

  it('entry ids are stable: the fixture commit’s entries have the same ids in the first build and the last', async () => {
    for (const name of ['atlas', 'works'] as const) {
      const before = (await readFeeds(scenario.first, name)).entries;
      const after = (await readFeeds(scenario.last, name)).entries.filter((entry) => entry.id.endsWith(`/${scenario.commits.fixture}`));
      expect(after.map((entry) => entry.id)).toEqual(before.map((entry) => entry.id));
      expect(before.length).toBeGreaterThan(0);
    }
  });

  it('without history (a copy without .git): both feeds parse, list nothing, and say why', async () => {
    for (const name of ['atlas', 'works'] as const) {
      const { entries, subtitle, description } = await readFeeds(scenario.tarball, name);
      expect(entries).toEqual([]);
      expect((await get(scenario.tarball, `/feeds/${name}.json`)).body.items).toEqual([]);
      expect(subtitle).toMatch(/History unavailable \(the content folder is not in a git repository/);
      expect(description).toBe(subtitle);
    }
  });

  it('are announced in /llms.txt', async () => {
    const llms = (await get(scenario.last, '/llms.txt')).text;
    for (const file of ['/feeds/atlas.atom', '/feeds/atlas.json', '/feeds/works.atom', '/feeds/works.json']) expect(llms).toContain(file);
  });
});

describe('each record’s history', () => {
  it('the JSON twins carry the revisions, newest first, with date, commit and what changed', async () => {
    const { commits } = scenario;
    const d1 = DivergenceDocumentSchema.parse((await get(scenario.last, '/records/TST-D1.json')).body);
    expect(d1.history).toMatchObject({ history: 'complete', reason: null });
    expect(d1.history!.revisions.map((revision) => [revision.commit, revision.change, revision.what, revision.date, revision.author])).toEqual([
      [commits.tier, 'changed', 'tier C3 → C1', commitDate(commits.tier), 'Contributor'],
      [commits.fixture, 'added', 'added', commitDate(commits.fixture), 'Contributor'],
    ]);
    expect(d1.history!.revisions[0]).toMatchObject({ tier: { from: 'C3', to: 'C1' }, fields: ['certification'], subject: 'TST-D1: tier C1' });
    expect(d1.history!.note).toBe(`2 revisions, the latest ${commitDate(commits.tier).slice(0, 10)}.`);
    const d9 = DivergenceDocumentSchema.parse((await get(scenario.last, '/records/TST-D9.json')).body);
    expect(d9.history!.revisions.map((revision) => [revision.commit, revision.what])).toEqual([[commits.added, 'added']]);
    const work = WorkDocumentSchema.parse((await get(scenario.last, '/records/TST-5.json')).body);
    expect(work.history!.revisions.map((revision) => [revision.commit, revision.what])).toEqual([[commits.added, 'added']]);
    const older = WorkDocumentSchema.parse((await get(scenario.last, '/records/TST-1.json')).body);
    expect(older.history!.revisions.map((revision) => [revision.commit, revision.what])).toEqual([[commits.fixture, 'added']]);
    // The markdown twin stays the source, byte for byte: its sha256 is the content hash the history names.
    expect((await get(scenario.last, '/records/TST-D1.md')).text).toBe(scenario.repo.read('divergences/TST-D1.md'));
  });

  it('GET /api/divergences?id= carries the same history as the twin', async () => {
    for (const id of ['TST-D1', 'TST-D9', 'TST-D2']) {
      const api = DivergenceRecordSchema.parse((await get(scenario.last, `/api/divergences?id=${id}`)).body);
      const twin = DivergenceDocumentSchema.parse((await get(scenario.last, `/records/${id}.json`)).body);
      expect(api.history).toEqual(twin.history);
      expect(api.history!.revisions.length).toBeGreaterThan(0);
    }
  });

  it('without history: the twins and the API say so plainly, with the reason, and list nothing', async () => {
    const unavailable: Partial<RecordHistory> = { history: 'unavailable', revisions: [] };
    for (const url of ['/records/TST-D1.json', '/records/TST-1.json', '/api/divergences?id=TST-D1']) {
      const history = (await get(scenario.tarball, url)).body.history as RecordHistory;
      expect(history, url).toMatchObject(unavailable);
      expect(history.note, url).toMatch(/^History unavailable: the content folder is not in a git repository/);
      expect(history.reason, url).toMatch(/not in a git repository/);
    }
  });
});

const structured = (result: CallToolResult) => result.structuredContent as Record<string, unknown>;
const textOf = (result: CallToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;

describe('the MCP changes tool', () => {
  it('returns the same delta as GET /api/changes, from every revision the history holds', async () => {
    const { last, first } = scenario;
    const page = (await get(last, '/changes/page-1.json')).body as { revisions: { corpus_rev: string }[] };
    const revisions = [...new Set([first.rev, ...page.revisions.map((revision) => revision.corpus_rev)])];
    expect(revisions).toHaveLength(3);
    for (const since of revisions) {
      const http = await get(last, `/api/changes?since=${since}`);
      expect(http.status).toBe(200);
      const result = await call('changes', { since });
      expect(result.isError, since).toBeFalsy();
      expect(structured(result)).toEqual(http.body);
    }
    const fromFirst = await call('changes', { since: first.rev });
    expect(textOf(fromFirst)).toContain(`Since ${first.rev}: 2 revisions up to ${last.rev}.`);
    expect(textOf(fromFirst)).toContain('- added divergence TST-D9');
    expect(textOf(fromFirst)).toContain('- changed divergence TST-D1: tier C3 → C1');
    expect(textOf(await call('changes', { since: last.rev }))).toMatch(/^Up to date/);
  });

  it('maps errors as the route does, and names the tool to call next', async () => {
    const cases: [string, number, string][] = [
      ['0123456789abcdef', 404, 'REVISION_NOT_FOUND'],
      ['tip', 400, 'INVALID_PARAMETER'],
      ['', 400, 'PARAM_MISSING'],
    ];
    for (const [since, status, code] of cases) {
      const http = await get(scenario.last, `/api/changes?since=${since}`);
      expect([http.status, http.body.error.code]).toEqual([status, code]);
      const result = await call('changes', { since });
      expect(result.isError, since).toBe(true);
      const error = structured(result).error as Record<string, unknown>;
      expect(error).toMatchObject({ status, code, message: http.body.error.message, agent_action: http.body.error.agent_action });
    }
    const unknown = structured(await call('changes', { since: '0123456789abcdef' })).error as Record<string, unknown>;
    expect(unknown.suggested_tool).toEqual({ name: 'info', arguments: {} });
    const malformed = structured(await call('changes', { since: 'tip' })).error as Record<string, unknown>;
    expect(malformed.suggested_tool).toEqual({ name: 'changes', arguments: { since: scenario.last.rev } });
  });

  it('read_divergences by id shows the record’s revisions, newest first', async () => {
    const result = await call('read_divergences', { id: 'TST-D1' });
    expect(result.isError).toBeFalsy();
    expect((structured(result).history as RecordHistory).revisions.map((revision) => revision.what)).toEqual(['tier C3 → C1', 'added']);
    expect(textOf(result)).toMatch(new RegExp(`History: 2 revisions.*\\n- \\d{4}-\\d{2}-\\d{2} ${scenario.commits.tier.slice(0, 10)} tier C3 → C1`));
  });
});
