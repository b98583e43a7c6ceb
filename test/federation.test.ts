/**
 * Issue 18, done when: two deployments on loopback with different content and prefixes; B pulls
 * A, the curator approves, B serves A's record verbatim with verifiable provenance; a record
 * altered in transit, a forged signature and a replayed old manifest are each refused; a second
 * pull stages nothing new. Real server processes; a tampering proxy stands between B and A.
 * Issue 29 item 3: keys pinned (on the first pull, or by the operator before it), a rotation
 * signed by the pinned key accepted, an unsigned key change and a mismatched first contact refused.
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
async function startProxy(target: string): Promise<{ base: string; target: string; rewrite: Rewrite | undefined; requests: string[]; close(): void }> {
  const state: { base: string; target: string; rewrite: Rewrite | undefined; requests: string[]; close(): void } = {
    base: '',
    target,
    rewrite: undefined,
    requests: [],
    close: () => server.close(),
  };
  const server = http.createServer((request, response) => {
    // The Host header is passed on: the node signs for the origin it is reached at.
    http.get(new URL(request.url!, state.target), { headers: { host: request.headers.host! } }, (upstream) => {
      const chunks: Buffer[] = [];
      upstream.on('data', (chunk: Buffer) => chunks.push(chunk));
      upstream.on('end', () => {
        state.requests.push(request.url!);
        // A rewrite sees the path alone (a pull after the first asks the manifest ?since=).
        const body = state.rewrite ? state.rewrite(new URL(request.url!, state.target).pathname, Buffer.concat(chunks)) : Buffer.concat(chunks);
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
    // asked since the revision the first pull accepted, nothing changed: none listed, none staged
    expect(second).toMatchObject({ since: second.corpus_rev, listed: 0, unchanged: 0, staged: [] });
    // only the three documents: no record twin is fetched again
    const documents = (
      await Promise.all(
        ['/.well-known/polyphony-node.json', `/federation/manifest.json?since=${second.since}`, `/federation/manifest.sig?since=${second.since}`].map(
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
    proxy.requests.length = 0;
    const again = await pull(proxy.base, { store });
    proxy.rewrite = undefined;
    // The second pull asks what changed since the revision it accepted; A was built without git history, so it lists every record and says so (no since).
    const rev = (await store.getPeer(new URL(proxy.base).origin))!.last_corpus_rev;
    expect(rev).toBe(current.corpus_rev);
    expect(proxy.requests.filter((url) => url.startsWith('/federation/'))).toEqual([
      `/federation/manifest.json?since=${rev}`,
      `/federation/manifest.sig?since=${rev}`,
    ]);
    expect(again).toMatchObject({ listed: 2, unchanged: 1, since: null, corpus_rev: rev });
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

describe('federation keys: pinned, rotated with a signed statement (issue 29 item 3)', () => {
  let a: BuiltApp;
  let aContent: string;
  let dir: string;
  let aKeyFile: string;
  let aStorePath: string;
  let aServer: ServerProcess;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  const servers: ServerProcess[] = [];
  const fetcher = createFetcher({ allowPrivate: true, timeoutMs: 10_000 });

  const cli = (script: 'federate' | 'verify', args: string[], env: Record<string, string> = {}) =>
    run(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, `scripts/${script}.ts`), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, FEDERATION_ALLOW_PRIVATE: '1', ...env },
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
    );
  const pullInto = (storePath: string) =>
    cli('federate', ['pull', proxy.base, '--store', storePath, '--content', writeFixtureContent({ prefix: 'BBB' }), '--json']);
  const startA = async () => {
    aServer = await startServerProcess({
      ARTIFACTS_DIR: a.artifactsDir,
      STORE_PATH: aStorePath,
      SITE_DIR: path.join(dir, 'none'),
      FEDERATION_KEY_FILE: aKeyFile,
    });
    servers.push(aServer);
  };
  const keyIdOfA = async () =>
    ((await (await fetch(`${proxy.base}/.well-known/polyphony-node.json`)).json()) as { public_key: { key_id: string } }).public_key.key_id;

  beforeAll(async () => {
    aContent = writeFixtureContent({ prefix: 'AAA' });
    a = await buildApp(aContent);
    dir = tempDir('federation-keys');
    aKeyFile = path.join(dir, 'a-key.pem');
    aStorePath = path.join(dir, 'a.db');
    await startA();
    proxy = await startProxy(aServer.base);
  }, 180_000);
  afterAll(() => {
    proxy?.close();
    for (const server of servers) server.child.kill('SIGTERM');
  });

  it('a key pinned by the operator before any pull: another key on first contact is refused, the right one pulls; verify --expect-key checks it', async () => {
    const keyId = await keyIdOfA();
    const wrong = 'f'.repeat(32);
    const storePath = path.join(dir, 'b-trusting.db');
    const pinned = await cli('federate', ['trust', proxy.base, '--key', wrong, '--store', storePath]);
    expect(pinned).toMatchObject({ code: 0, stdout: expect.stringContaining(`key ${wrong} pinned`) });
    const refused = await pullInto(storePath);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      new RegExp(`^pull refused \\(PINNED_KEY_MISMATCH\\): ${proxy.base} presents key ${keyId}, but the operator pinned ${wrong}`),
    );
    const store = createSqliteStore(storePath);
    expect(await store.listImports()).toEqual([]);
    // a pinned key changes only through a signed rotation, not by trusting again
    expect((await cli('federate', ['trust', proxy.base, '--key', keyId, '--store', storePath])).code).toBe(1);

    const rightPath = path.join(dir, 'b-right.db');
    expect((await cli('federate', ['trust', proxy.base, '--key', keyId, '--store', rightPath])).code).toBe(0);
    const pulled = JSON.parse((await pullInto(rightPath)).stdout) as { staged: unknown[] };
    expect(pulled.staged).toHaveLength(2);
    const right = createSqliteStore(rightPath);
    expect((await right.getPeer(proxy.base))?.public_key).not.toBe('');
    await Promise.all([store.close(), right.close()]);

    expect(await cli('verify', [proxy.base, '--expect-key', keyId])).toMatchObject({ code: 0 });
    const mismatch = await cli('verify', [proxy.base, '--expect-key', wrong]);
    expect(mismatch.code).toBe(1);
    expect(mismatch.stdout).toContain(`presents key ${keyId}, not the expected ${wrong}`);
    expect((await cli('verify', [proxy.base, '--expect-key', 'nothex'])).code).toBe(2);
  }, 120_000);

  it('a key rotated with rotate-key is accepted by a puller that pinned the old one; an unsigned key change is refused with a clear error', async () => {
    const storePath = path.join(dir, 'b-rotating.db');
    const first = JSON.parse((await pullInto(storePath)).stdout) as { staged: unknown[]; node_id: string };
    expect(first.staged).toHaveLength(2);
    const oldKeyId = await keyIdOfA();
    expect(((await (await fetch(`${proxy.base}/.well-known/polyphony-key-rotations.json`)).json()) as { rotations: unknown[] }).rotations).toEqual([]);

    // An impostor's key, with no statement: refused, naming the missing signed statement.
    const impostor = keyFromFile(path.join(tempDir('impostor'), 'key.pem'));
    proxy.rewrite = (url, body) =>
      url === '/.well-known/polyphony-node.json'
        ? Buffer.from(
            JSON.stringify({ ...json(body), node_id: impostor.nodeId, public_key: { algorithm: 'ed25519', key_id: impostor.keyId, raw: impostor.publicKey } }),
          )
        : body;
    const unsigned = await pullInto(storePath);
    expect(unsigned.code).toBe(1);
    expect(unsigned.stderr).toMatch(
      /^pull refused \(KEY_CHANGED\): .* now presents key [0-9a-f]{32}, not the key [0-9a-f]{32} pinned for it, and .*a key change without a rotation statement signed by the pinned key is refused/,
    );
    proxy.rewrite = undefined;

    // The operator of A rotates its key: the statement is published, then A restarts on the new key.
    aServer.child.kill('SIGTERM');
    const rotated = await cli('federate', ['rotate-key', '--store', aStorePath, '--content', aContent, '--origin', proxy.base, '--json'], {
      FEDERATION_KEY_FILE: aKeyFile,
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    const { previous, next } = JSON.parse(rotated.stdout) as { previous: string; next: string };
    expect(previous).toBe(oldKeyId);
    await startA();
    proxy.target = aServer.base;
    expect(await keyIdOfA()).toBe(next);
    const statements = (await (await fetch(`${proxy.base}/.well-known/polyphony-key-rotations.json`)).json()) as {
      rotations: { statement: { previous: { key_id: string }; next: { key_id: string } } }[];
    };
    expect(statements.rotations.map((rotation) => [rotation.statement.previous.key_id, rotation.statement.next.key_id])).toEqual([[previous, next]]);

    // A statement not signed by the pinned key does not carry the pin.
    const genuine = await (await fetch(`${proxy.base}/.well-known/polyphony-key-rotations.json`)).text();
    proxy.rewrite = (url, body) => {
      if (url !== '/.well-known/polyphony-key-rotations.json') return body;
      const document = JSON.parse(body.toString('utf8')) as { rotations: { signature: string; next_signature: string }[] };
      for (const rotation of document.rotations) rotation.signature = rotation.next_signature;
      return Buffer.from(JSON.stringify(document));
    };
    const forged = await pullInto(storePath);
    expect(forged.stderr).toMatch(/^pull refused \(KEY_CHANGED\): .*is not signed by the pinned key/);
    proxy.rewrite = undefined;
    expect(JSON.parse(genuine)).toEqual(JSON.parse(await (await fetch(`${proxy.base}/.well-known/polyphony-key-rotations.json`)).text()));

    // The signed rotation is accepted: the pin moves, and the records pulled under the old key are not staged again.
    // (The revision forgotten, the pull reads the whole manifest, so those records are listed and found known.)
    const forgetting = createSqliteStore(storePath);
    await forgetting.stageImports({ ...(await forgetting.getPeer(proxy.base))!, last_corpus_rev: '' }, []);
    await forgetting.close();
    const accepted = await pullInto(storePath);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(JSON.parse(accepted.stdout)).toMatchObject({ rotated: { from: previous, to: next, steps: 1 }, since: null, listed: 2, unchanged: 2, staged: [] });
    const store = createSqliteStore(storePath);
    expect((await store.getPeer(proxy.base))?.node_id).toBe(`pn1:${next}`);
    await store.close();
    // and the old key is now the one refused
    const back = keyFromFile(`${aKeyFile}.retired-${previous}`);
    expect(back.keyId).toBe(previous);
    proxy.rewrite = (url, body) =>
      url === '/.well-known/polyphony-node.json'
        ? Buffer.from(JSON.stringify({ ...json(body), node_id: back.nodeId, public_key: { algorithm: 'ed25519', key_id: back.keyId, raw: back.publicKey } }))
        : body;
    expect((await pullInto(storePath)).stderr).toMatch(/^pull refused \(KEY_CHANGED\)/);
    proxy.rewrite = undefined;
    expect(await verifyDeployment(proxy.base, fetcher, { expectKey: next })).toMatchObject({ problems: [] });
  }, 180_000);
});
