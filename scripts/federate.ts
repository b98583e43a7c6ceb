/**
 * `npm run federate -- pull <url> [--plan] [--json]`: pull a peer's Atlas records as pending
 * imports (docs/FEDERATION.md). STORE_PATH names the store, CONTENT_DIR the content whose id
 * prefix is ours; FEDERATION_* variables set the limits. Exit 0 on success, 1 when the pull was
 * refused (nothing staged), 2 on a usage error.
 * `trust <url> --key <key id>` pins an origin's key before any pull; `rotate-key` replaces this
 * node's key and publishes the rotation statement signed by the old one.
 */
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { FederationError } from '../api/federation/errors.ts';
import { createFetcher, parseHttpUrl } from '../api/federation/fetch.ts';
import { nodeIdOf } from '../api/federation/keys.ts';
import { KEY_ROTATIONS_PATH, rotateNodeKey } from '../api/federation/rotation.ts';
import { federationLimitsFromEnv } from '../api/federation/limits.ts';
import { pullFromPeer, type PullReport } from '../api/federation/pull.ts';
import { openStore } from '../storage/open-store.ts';
import type { Store } from '../storage/store.ts';
import { SiteConfigSchema } from '../schemas/content.ts';
import { exitWhenFlushed, quietOnClosedPipe } from './lib/cli-exit.ts';
import { parseYaml } from '../content-files/frontmatter.ts';
import { pathsFromEnv, REPO_ROOT } from '../core/paths.ts';

const USAGE = `usage: npm run federate -- pull <url> [--plan] [--json]
       npm run federate -- trust <url> --key <key id>
       npm run federate -- rotate-key [--origin <url>] [--json]

  pull <url>   read the peer's node document and signed manifest, verify signature and hashes,
               and stage new or changed records as pending imports (npm run curate -- imports).
               The origin's key is pinned on the first pull; a later pull presenting another key is
               refused unless the origin publishes a rotation statement signed by the pinned key
  --plan       verify and list what would be staged; stage nothing
  --json       the report as one JSON document
  trust <url> --key <key id>
               pin the origin's key (32 hex digits, as its node document and npm run verify show
               it) before any pull: the first pull then refuses any other key
  rotate-key   replace this deployment's federation key (FEDERATION_KEY_FILE, else the store's
               seed) and publish the rotation statement, signed by the old key and the new, at
               /.well-known/polyphony-key-rotations.json; restart the server to sign with the new key
  --origin <url>                the origin this deployment signs for (default FEDERATION_ORIGIN, else site.base_url)
  --store <file|postgres URL>   default STORE_PATH, else .data/polyphony.db
  --content <dir>               default CONTENT_DIR, else content/ (for our id prefix)

  FEDERATION_MAX_RECORDS (5000), FEDERATION_MAX_BYTES (50000000), FEDERATION_TIMEOUT_MS (10000),
  FEDERATION_ALLOW_PRIVATE=1 to fetch from loopback or private addresses (off by default)
`;

function describe(report: PullReport): string {
  const verb = report.plan ? 'would stage' : 'staged';
  return [
    ...(report.rotated
      ? [
          `${report.origin} rotated its key ${report.rotated.from} → ${report.rotated.to} (${report.rotated.steps} signed statement${report.rotated.steps === 1 ? '' : 's'}); the pin moved to the new key`,
        ]
      : []),
    `${report.origin} (${report.name}, ${report.node_id}): manifest signed ${report.signed_at}, signature and hashes verified`,
    `${report.listed} records listed${report.since ? ` (changed since revision ${report.since}; now ${report.corpus_rev})` : ` (every record, revision ${report.corpus_rev})`}, ${report.unchanged} already known, ${verb} ${report.staged.length}; ${report.bytes_fetched} bytes fetched`,
    ...report.staged.map((item) => `  ${item.record_id}  ${item.sha256.slice(0, 16)}…${item.import_id ? `  ${item.import_id}` : ''}`),
    ...(report.staged.length > 0 && !report.plan ? ['Review them: npm run curate -- imports'] : []),
  ].join('\n');
}

async function main(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        plan: { type: 'boolean' },
        json: { type: 'boolean' },
        key: { type: 'string' },
        origin: { type: 'string' },
        store: { type: 'string', default: process.env.STORE_PATH ?? path.join(REPO_ROOT, '.data', 'polyphony.db') },
        content: { type: 'string', default: pathsFromEnv().contentDir },
      },
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const [command, url] = positionals;
  if (command === 'trust') return trust(url, values, positionals.length);
  if (command === 'rotate-key') return rotateKey(values, positionals.length);
  if (command !== 'pull' || !url || positionals.length > 2) {
    process.stderr.write(`${command && command !== 'pull' ? `unknown command ${JSON.stringify(command)}\n\n` : ''}${USAGE}`);
    return 2;
  }
  let store: Store | undefined;
  try {
    const limits = federationLimitsFromEnv(process.env);
    const site = SiteConfigSchema.parse(parseYaml(readFileSync(path.join(values.content, 'site.yaml'), 'utf8')));
    store = await openStore(values.store);
    const report = await pullFromPeer(url, {
      store,
      fetch: createFetcher(limits),
      localPrefix: site.id_prefix,
      maxRecords: limits.maxRecords,
      maxBytes: limits.maxBytes,
      plan: Boolean(values.plan),
      now: () => new Date(),
    });
    process.stdout.write(`${values.json ? JSON.stringify(report) : describe(report)}\n`);
    return 0;
  } catch (error) {
    const code = error instanceof FederationError ? error.code : 'ERROR';
    if (values.json) process.stdout.write(`${JSON.stringify({ error: { code, message: (error as Error).message } })}\n`);
    process.stderr.write(`pull refused (${code}): ${(error as Error).message}\n`);
    return 1;
  } finally {
    await store?.close();
  }
}

interface Values {
  key?: string | undefined;
  origin?: string | undefined;
  store: string;
  content: string;
  json?: boolean | undefined;
}

async function trust(url: string | undefined, values: Values, count: number): Promise<number> {
  if (!url || count > 2 || !values.key) {
    process.stderr.write(`trust needs a URL and --key <key id>\n\n${USAGE}`);
    return 2;
  }
  let origin: string;
  try {
    origin = parseHttpUrl(url).origin;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
  if (!/^[0-9a-f]{32}$/.test(values.key)) {
    process.stderr.write(`--key must be a key id: 32 lower-case hex digits (the public_key.key_id of ${origin}/.well-known/polyphony-node.json)\n`);
    return 2;
  }
  const store = await openStore(values.store);
  try {
    const outcome = await store.trustPeer(origin, nodeIdOf(values.key));
    if (outcome === 'conflict') {
      const pinned = await store.getPeer(origin);
      process.stderr.write(
        `trust refused: ${origin} already has the key ${pinned?.node_id.replace(/^pn1:/, '')} pinned; a pinned key changes only through a rotation statement signed by it (checked on pull)\n`,
      );
      return 1;
    }
    process.stdout.write(
      `${origin}: key ${values.key} ${outcome === 'pinned' ? 'pinned' : 'was already pinned'}; a pull presenting any other key is refused\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

async function rotateKey(values: Values, count: number): Promise<number> {
  if (count > 1) {
    process.stderr.write(USAGE);
    return 2;
  }
  const site = SiteConfigSchema.parse(parseYaml(readFileSync(path.join(values.content, 'site.yaml'), 'utf8')));
  const configured = values.origin ?? process.env.FEDERATION_ORIGIN ?? site.base_url;
  if (!configured) {
    process.stderr.write('rotate-key needs the origin this deployment signs for: --origin <url>, FEDERATION_ORIGIN or site.base_url\n');
    return 2;
  }
  const store = await openStore(values.store);
  try {
    const { previous, next, rotation } = await rotateNodeKey({
      secrets: store,
      keyFile: process.env.FEDERATION_KEY_FILE || undefined,
      origin: new URL(configured).origin,
      now: new Date(),
    });
    process.stdout.write(
      values.json
        ? `${JSON.stringify({ previous: previous.keyId, next: next.keyId, rotation })}\n`
        : `key ${previous.keyId} retired, ${next.keyId} in use; the statement signed by both is published at ${KEY_ROTATIONS_PATH}. Restart the server so it signs with the new key.\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

quietOnClosedPipe();
const code = await main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n`);
  return 1;
});
await exitWhenFlushed(code);
