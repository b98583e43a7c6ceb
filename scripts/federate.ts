/**
 * `npm run federate -- pull <url> [--plan] [--json]`: pull a peer's Atlas records as pending
 * imports (docs/FEDERATION.md). STORE_PATH names the store, CONTENT_DIR the content whose id
 * prefix is ours; FEDERATION_* variables set the limits. Exit 0 on success, 1 when the pull was
 * refused (nothing staged), 2 on a usage error.
 */
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { FederationError } from '../api/federation/errors.ts';
import { createFetcher } from '../api/federation/fetch.ts';
import { federationLimitsFromEnv } from '../api/federation/limits.ts';
import { pullFromPeer, type PullReport } from '../api/federation/pull.ts';
import { openStore } from '../storage/open-store.ts';
import type { Store } from '../storage/store.ts';
import { SiteConfigSchema } from '../schemas/content.ts';
import { exitWhenFlushed, quietOnClosedPipe } from './lib/cli-exit.ts';
import { parseYaml } from '../content-files/frontmatter.ts';
import { pathsFromEnv, REPO_ROOT } from '../core/paths.ts';

const USAGE = `usage: npm run federate -- pull <url> [--plan] [--json]

  pull <url>   read the peer's node document and signed manifest, verify signature and hashes,
               and stage new or changed records as pending imports (npm run curate -- imports)
  --plan       verify and list what would be staged; stage nothing
  --json       the report as one JSON document
  --store <file|postgres URL>   default STORE_PATH, else .data/polyphony.db
  --content <dir>               default CONTENT_DIR, else content/ (for our id prefix)

  FEDERATION_MAX_RECORDS (5000), FEDERATION_MAX_BYTES (50000000), FEDERATION_TIMEOUT_MS (10000),
  FEDERATION_ALLOW_PRIVATE=1 to fetch from loopback or private addresses (off by default)
`;

function describe(report: PullReport): string {
  const verb = report.plan ? 'would stage' : 'staged';
  return [
    `${report.origin} (${report.name}, ${report.node_id}): manifest signed ${report.signed_at}, signature and hashes verified`,
    `${report.listed} records listed, ${report.unchanged} already known, ${verb} ${report.staged.length}; ${report.bytes_fetched} bytes fetched`,
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

quietOnClosedPipe();
const code = await main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n`);
  return 1;
});
await exitWhenFlushed(code);
