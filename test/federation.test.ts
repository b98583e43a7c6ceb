/**
 * Issue 18, done when: two deployments on loopback with different content and prefixes; B pulls
 * A, the curator approves, B serves A's record verbatim with verifiable provenance; a record
 * altered in transit, a forged signature and a replayed old manifest are each refused; a second
 * pull stages nothing new. Real server processes; a tampering proxy stands between B and A.
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FederationError } from '../api/federation/errors.ts';
import { createFetcher } from '../api/federation/fetch.ts';
import { keyFromFile } from '../api/federation/keys.ts';
import { signManifest, signRecord } from '../api/federation/protocol.ts';
import { sha256Hex } from '../core/manifest.ts';
import { pullFromPeer, type PullOptions } from '../api/federation/pull.ts';
import { verifyDeployment } from '../api/federation/verify.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import type { Store } from '../storage/store.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { REPO_ROOT } from '../core/paths.ts';
import type { FederationManifest } from '../schemas/federation.ts';
import { buildApp, tempDir, TEST_CACHE_DIR, testEmbedder, type BuiltApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { startServerProcess, type ServerProcess } from './helpers/server-process.ts';

const run = promisify(execFile);
type Rewrite = (path: string, body: Buffer) => Buffer;

/** A loopback proxy in front of a server that can rewrite any answer on the way. */
async function startProxy(target: string): Promise<{ base: string; rewrite: Rewrite | undefined; close(): void }> {
  const state: { base: string; rewrite: Rewrite | undefined; close(): void } = { base: '', rewrite: undefined, close: () => server.close() };
  const server = http.createServer((request, response) => {
    // The Host header is passed on: the node signs for the origin it is reached at.
    http.get(new URL(request.url!, target), { headers: { host: request.headers.host! } }, (upstream) => {
      const chunks: Buffer[] = [];
      upstream.on('data', (chunk: Buffer) => chunks.push(chunk));
      upstream.on('end', () => {
        const body = state.rewrite ? state.rewrite(request.url!, Buffer.concat(chunks)) : Buffer.concat(chunks);
        response.writeHead(upstream.statusCode!, { 'content-type': upstream.headers['content-type'] ?? 'application/octet-stream' });
        response.end(body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

const json = (body: Buffer) => JSON.parse(body.toString('utf8')) as Record<string, unknown>;

describe('federation between two deployments on loopback', () => {
  let a: BuiltApp;
  let bContent: string;
  let aServer: ServerProcess;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let bStore: Store;
  let bStorePath: string;
  let aKeyFile: string;
  const servers: ServerProcess[] = [];

  const pull = (url: string, extra: Partial<PullOptions> = {}) =>
    pullFromPeer(url, {
      store: bStore,
      fetch: createFetcher({ allowPrivate: true, timeoutMs: 10_000 }),
      localPrefix: 'BBB',
      maxRecords: 100,
      maxBytes: 5_000_000,
      now: () => new Date(),
      ...extra,
    });
  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(FederationError);
    return error as FederationError;
  };

  beforeAll(async () => {
    a = await buildApp(writeFixtureContent({ prefix: 'AAA' }));
    bContent = writeFixtureContent({ prefix: 'BBB' });
    const dir = tempDir('federation');
    aKeyFile = path.join(dir, 'a-key.pem');
    aServer = await startServerProcess({
      ARTIFACTS_DIR: a.artifactsDir,
      STORE_PATH: path.join(dir, 'a.db'),
      SITE_DIR: path.join(dir, 'none'),
      FEDERATION_KEY_FILE: aKeyFile,
    });
    servers.push(aServer);
    proxy = await startProxy(aServer.base);
    bStorePath = path.join(dir, 'b.db');
    bStore = createSqliteStore(bStorePath);
  }, 180_000);
  afterAll(async () => {
    proxy?.close();
    for (const server of servers) server.child.kill('SIGTERM');
    await bStore?.close();
  });

  it('publishes a node document and a manifest whose signature and hashes verify; the private key is never served', async () => {
    const node = json(Buffer.from(await (await fetch(`${aServer.base}/.well-known/polyphony-node.json`)).arrayBuffer()));
    expect(node).toMatchObject({
      protocol: 'polyphony-federation/1',
      origin: aServer.base,
      id_prefix: 'AAA',
      offers: ['pull'],
      counts: { atlas_records: 2, works: 4 },
      licences: { code: 'MIT', data: 'CC BY-SA 4.0' },
    });
    const pem = readFileSync(aKeyFile, 'utf8');
    const seed = pem.split('\n').slice(1, -2).join('');
    for (const file of ['/.well-known/polyphony-node.json', '/federation/manifest.json', '/federation/manifest.sig']) {
      const text = await (await fetch(`${aServer.base}${file}`)).text();
      expect(text).not.toContain(seed);
    }
    expect(await verifyDeployment(aServer.base, createFetcher({ allowPrivate: true, timeoutMs: 10_000 }))).toEqual({
      origin: aServer.base,
      records: 2,
      imports: 0,
      problems: [],
    });
    const cli = await run(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'scripts/verify.ts'), aServer.base], {
      cwd: REPO_ROOT,
      env: { ...process.env, FEDERATION_ALLOW_PRIVATE: '1' },
    });
    expect(cli.stdout).toBe(`${aServer.base}: 2 records and 0 imports checked; signature, hashes and provenance verify\n`);
  }, 30_000);

  it('refuses loopback addresses unless configured, and non-http(s) URLs', async () => {
    const strict = createFetcher({ allowPrivate: false, timeoutMs: 10_000 });
    expect((await refusal(pull(aServer.base, { fetch: strict }))).code).toBe('ADDRESS_REFUSED');
    expect((await refusal(pull('file:///etc/passwd'))).code).toBe('REDIRECT_REFUSED');
    expect(await bStore.listImports()).toEqual([]);
  });

  it('refuses a record altered in transit, a forged signature, a protocol mismatch and too many records, staging nothing', async () => {
    proxy.rewrite = (url, body) =>
      url === '/records/AAA-D2.md' ? Buffer.from(body.toString('utf8').replace('installed, not owned', 'installed, and owned')) : body;
    const altered = await refusal(pull(proxy.base));
    expect(altered.code).toBe('ALTERED_RECORD');
    expect(altered.message).toMatch(/AAA-D2\.md is \d+ bytes with sha256 [0-9a-f]{64}; the signed manifest lists/);

    const forger = generateKeyPairSync('ed25519').privateKey;
    const forgedKeyFile = path.join(tempDir('forger'), 'key.pem');
    writeFileSync(forgedKeyFile, forger.export({ format: 'pem', type: 'pkcs8' }));
    proxy.rewrite = undefined;
    const original = JSON.parse(await (await fetch(`${proxy.base}/federation/manifest.json`)).text()) as FederationManifest;
    const genuineSignature = JSON.parse(await (await fetch(`${proxy.base}/federation/manifest.sig`)).text()) as { key_id: string };
    // the manifest with a record added, signed by another key under the genuine key id
    const tampered = { ...original, records: [...original.records, { ...original.records[0]!, id: 'AAA-D9' }] };
    const forged = { ...signManifest(keyFromFile(forgedKeyFile), tampered), key_id: genuineSignature.key_id };
    proxy.rewrite = (url, body) =>
      url === '/federation/manifest.json'
        ? Buffer.from(JSON.stringify(tampered))
        : url === '/federation/manifest.sig'
          ? Buffer.from(JSON.stringify(forged))
          : body;
    const badSignature = await refusal(pull(proxy.base));
    expect(badSignature.code).toBe('BAD_SIGNATURE');
    // the genuine signature over a manifest changed on the way
    proxy.rewrite = (url, body) => (url === '/federation/manifest.json' ? Buffer.from(JSON.stringify(tampered)) : body);
    expect((await refusal(pull(proxy.base))).code).toBe('BAD_SIGNATURE');

    proxy.rewrite = (url, body) =>
      url === '/.well-known/polyphony-node.json' ? Buffer.from(JSON.stringify({ ...json(body), protocol: 'polyphony-federation/2' })) : body;
    expect((await refusal(pull(proxy.base))).code).toBe('PROTOCOL_MISMATCH');
    proxy.rewrite = undefined;
    expect((await refusal(pull(proxy.base, { maxRecords: 1 }))).code).toBe('LIMIT_EXCEEDED');
    expect((await refusal(pull(proxy.base, { maxBytes: 2048 }))).code).toBe('LIMIT_EXCEEDED');
    expect(await bStore.listImports()).toEqual([]);
    expect(await bStore.getPeer(proxy.base)).toBeUndefined();
  });

  it('pulls with the CLI: --plan stages nothing, the pull stages pending imports, a second pull stages nothing new', async () => {
    const cli = (args: string[]) =>
      run(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'scripts/federate.ts'), ...args, '--store', bStorePath, '--content', bContent, '--json'], {
        cwd: REPO_ROOT,
        env: { ...process.env, FEDERATION_ALLOW_PRIVATE: '1' },
      });
    const plan = JSON.parse((await cli(['pull', proxy.base, '--plan'])).stdout) as { staged: { record_id: string }[]; plan: boolean };
    expect(plan).toMatchObject({ plan: true, listed: 2, unchanged: 0 });
    expect(plan.staged.map((item) => item.record_id)).toEqual(['AAA-D1', 'AAA-D2']);
    expect(await bStore.listImports()).toEqual([]);

    const first = JSON.parse((await cli(['pull', proxy.base])).stdout) as { staged: { record_id: string; import_id: string }[] };
    expect(first.staged.map((item) => item.record_id)).toEqual(['AAA-D1', 'AAA-D2']);
    const pending = await bStore.listImports('pending');
    expect(pending.map((item) => item.record_id)).toEqual(['AAA-D1', 'AAA-D2']);
    expect(pending[0]!.markdown).toBe(await (await fetch(`${aServer.base}/records/AAA-D1.md`)).text());

    const second = await pull(proxy.base);
    expect(second).toMatchObject({ listed: 2, unchanged: 2, staged: [] });
    // only the three documents: no record twin is fetched again
    const documents = (
      await Promise.all(
        ['/.well-known/polyphony-node.json', '/federation/manifest.json', '/federation/manifest.sig'].map(
          async (file) => (await (await fetch(`${proxy.base}${file}`)).arrayBuffer()).byteLength,
        ),
      )
    ).reduce((sum, bytes) => sum + bytes, 0);
    expect(second.bytes_fetched).toBe(documents);

    // the CLI's refusals: exit 1 naming the reason, nothing staged; a usage error exits 2
    const refused = await run(
      process.execPath,
      ['--import', 'tsx', path.join(REPO_ROOT, 'scripts/federate.ts'), 'pull', proxy.base, '--store', bStorePath, '--content', bContent],
      { cwd: REPO_ROOT, env: { ...process.env, FEDERATION_ALLOW_PRIVATE: '0' } },
    ).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^pull refused \(ADDRESS_REFUSED\): 127\.0\.0\.1 resolves to 127\.0\.0\.1, a non-public address/),
    });
    const usage = await run(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'scripts/federate.ts'), 'push', proxy.base], { cwd: REPO_ROOT }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(usage).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown command "push"') });
    expect(await bStore.listImports()).toHaveLength(2);
  }, 60_000);

  it('refuses a replayed older manifest, validly signed, and a changed key for the origin', async () => {
    const current = JSON.parse(await (await fetch(`${proxy.base}/federation/manifest.json`)).text()) as FederationManifest;
    const older = new Date(new Date(current.signed_at).getTime() - 10 * 60_000);
    // an old manifest listing an older version of a record: accepted, it would stage it
    const old = {
      ...current,
      signed_at: older.toISOString(),
      expires_at: new Date(older.getTime() + 3_600_000).toISOString(),
      records: current.records.slice(0, 1).map((entry) => ({ ...entry, sha256: '0'.repeat(64) })),
    };
    const oldSignature = signManifest(keyFromFile(aKeyFile), old);
    proxy.rewrite = (url, body) =>
      url === '/federation/manifest.json'
        ? Buffer.from(JSON.stringify(old))
        : url === '/federation/manifest.sig'
          ? Buffer.from(JSON.stringify(oldSignature))
          : body;
    const replayed = await refusal(pull(proxy.base));
    expect(replayed.code).toBe('REPLAYED_MANIFEST');

    const other = generateKeyPairSync('ed25519').privateKey;
    const otherFile = path.join(tempDir('other'), 'key.pem');
    writeFileSync(otherFile, other.export({ format: 'pem', type: 'pkcs8' }));
    const otherKey = keyFromFile(otherFile);
    proxy.rewrite = (url, body) =>
      url === '/.well-known/polyphony-node.json'
        ? Buffer.from(
            JSON.stringify({ ...json(body), node_id: otherKey.nodeId, public_key: { algorithm: 'ed25519', key_id: otherKey.keyId, raw: otherKey.publicKey } }),
          )
        : body;
    expect((await refusal(pull(proxy.base))).code).toBe('KEY_CHANGED');
    proxy.rewrite = undefined;
    expect((await bStore.listImports()).map((item) => item.status)).toEqual(['pending', 'pending']);
  });

  it('re-pulls only what changed: a record with a new hash is fetched and staged, superseding its pending version', async () => {
    const store = createSqliteStore(':memory:');
    expect((await pull(proxy.base, { store })).staged).toHaveLength(2);
    const key = keyFromFile(aKeyFile);
    const current = JSON.parse(await (await fetch(`${proxy.base}/federation/manifest.json`)).text()) as FederationManifest;
    const twin = Buffer.from((await (await fetch(`${proxy.base}/records/AAA-D2.md`)).text()).replace('installed, not owned', 'installed, and later owned'));
    const sha256 = sha256Hex(twin);
    const changed = {
      ...current,
      records: current.records.map((entry) =>
        entry.id === 'AAA-D2' ? { ...entry, sha256, bytes: twin.length, signature: signRecord(key, 'AAA-D2', sha256) } : entry,
      ),
    };
    const signature = signManifest(key, changed);
    const fetched: string[] = [];
    proxy.rewrite = (url, body) => {
      fetched.push(url);
      return url === '/federation/manifest.json'
        ? Buffer.from(JSON.stringify(changed))
        : url === '/federation/manifest.sig'
          ? Buffer.from(JSON.stringify(signature))
          : url === '/records/AAA-D2.md'
            ? twin
            : body;
    };
    const again = await pull(proxy.base, { store });
    proxy.rewrite = undefined;
    expect(again).toMatchObject({ listed: 2, unchanged: 1 });
    expect(again.staged.map((item) => [item.record_id, item.sha256])).toEqual([['AAA-D2', sha256]]);
    expect(fetched.filter((url) => url.startsWith('/records/'))).toEqual(['/records/AAA-D2.md']);
    expect((await store.listImports()).map((item) => [item.record_id, item.status])).toEqual([
      ['AAA-D1', 'pending'],
      ['AAA-D2', 'superseded'],
      ['AAA-D2', 'pending'],
    ]);
    await store.close();
  });

  it('keeps pending imports out of B until the curator approves; then B serves the record verbatim with verifiable provenance', async () => {
    const dir = tempDir('federation-b');
    const bArtifacts = path.join(dir, 'artifacts');
    const embedder = await testEmbedder();
    await buildArtifacts({ contentDir: bContent, artifactsDir: bArtifacts, cacheDir: TEST_CACHE_DIR, embedder });
    const env = { ARTIFACTS_DIR: bArtifacts, STORE_PATH: bStorePath, SITE_DIR: path.join(dir, 'none') };
    const before = await startServerProcess(env);
    servers.push(before);
    expect((await fetch(`${before.base}/api/divergences?id=AAA-D1`)).status).toBe(404);
    const query = await (await fetch(`${before.base}/api/query?q=${encodeURIComponent('Can a refusal that came from training still be your own?')}`)).text();
    expect(query).not.toContain('AAA-');
    before.child.kill('SIGTERM');

    const curate = (args: string[]) =>
      run(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'scripts/curate.ts'), ...args, '--store', bStorePath, '--content', bContent], {
        cwd: REPO_ROOT,
      });
    const listed = (await curate(['imports'])).stdout;
    expect(listed).toMatch(/^2 pending imports/);
    const [d1, d2] = await bStore.listImports('pending');
    const approved = JSON.parse((await curate(['approve-import', d1!.id, '--by', 'curator', '--json'])).stdout) as { files: string[] };
    expect(approved.files).toEqual(['divergences/AAA-D1.md', 'federation/AAA-D1.md']);
    await curate(['approve-import', d2!.id, '--by', 'curator']);
    expect(readFileSync(path.join(bContent, 'federation', 'AAA-D1.md'), 'utf8')).toBe(d1!.markdown);

    await buildArtifacts({ contentDir: bContent, artifactsDir: bArtifacts, cacheDir: TEST_CACHE_DIR, embedder });
    const after = await startServerProcess(env);
    servers.push(after);
    const fromA = (await (await fetch(`${aServer.base}/api/divergences?id=AAA-D1`)).json()) as { answers: { text: string }[]; question: string };
    const onB = (await (await fetch(`${after.base}/api/divergences?id=AAA-D1`)).json()) as {
      answers: { text: string }[];
      question: string;
      provenance: { source: string; federation: Record<string, unknown> };
    };
    expect(onB.question).toBe(fromA.question);
    expect(onB.answers.map((answer) => answer.text)).toEqual(fromA.answers.map((answer) => answer.text));
    expect(onB.provenance.source).toMatch(/^federation: imported from Fixture/);
    expect(onB.provenance.federation).toMatchObject({
      origin: proxy.base,
      origin_prefix: 'AAA',
      original_id: 'AAA-D1',
      licence: 'CC BY-SA 4.0',
      approved_by: 'curator',
    });
    const originCopy = await (await fetch(`${after.base}/records/AAA-D1.origin.md`)).text();
    expect(originCopy).toBe(await (await fetch(`${aServer.base}/records/AAA-D1.md`)).text());
    const twin = (await (await fetch(`${after.base}/records/AAA-D1.json`)).json()) as { provenance: { federation: { origin: string } } };
    expect(twin.provenance.federation.origin).toBe(proxy.base);

    const fetcher = createFetcher({ allowPrivate: true, timeoutMs: 10_000 });
    const verified = await verifyDeployment(after.base, fetcher);
    expect(verified).toMatchObject({ records: 2, imports: 2, problems: [] });
    // B's own manifest lists only its own records; the imports are listed apart
    const bManifest = (await (await fetch(`${after.base}/federation/manifest.json`)).json()) as FederationManifest;
    expect(bManifest.records.map((entry) => entry.id)).toEqual(['BBB-D1', 'BBB-D2']);
    expect(bManifest.imports.map((entry) => entry.id)).toEqual(['AAA-D1', 'AAA-D2']);

    // an origin copy altered on the way to a reader is named by the verifier
    const bProxy = await startProxy(after.base);
    bProxy.rewrite = (url, body) => (url === '/records/AAA-D2.origin.md' ? Buffer.concat([body, Buffer.from(' ')]) : body);
    const tampered = await verifyDeployment(bProxy.base, fetcher);
    bProxy.close();
    expect(tampered.problems).toEqual([expect.stringMatching(/^AAA-D2: the origin copy .* has sha256 [0-9a-f]{64}; the provenance says [0-9a-f]{64}$/)]);
  }, 180_000);
});
