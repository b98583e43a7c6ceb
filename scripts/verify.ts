/**
 * `npm run verify -- <url> [--expect-key <key id>]`: checks a deployment's signed federation
 * manifest (signed with the expected key, when given), every record twin's hash and signature,
 * and every import's origin signature (docs/FEDERATION.md). Prints
 * each mismatch; exit 0 when everything verifies, 1 otherwise, 2 on a usage error.
 */
import { FederationError } from '../api/federation/errors.ts';
import { createFetcher } from '../api/federation/fetch.ts';
import { federationLimitsFromEnv } from '../api/federation/limits.ts';
import { verifyDeployment } from '../api/federation/verify.ts';
import { exitWhenFlushed, quietOnClosedPipe } from './lib/cli-exit.ts';

async function main(args: string[]): Promise<number> {
  const positional = args.filter((arg) => arg !== '--');
  const expectAt = positional.indexOf('--expect-key');
  const expectKey = expectAt >= 0 ? positional[expectAt + 1] : undefined;
  if (expectAt >= 0) positional.splice(expectAt, 2);
  const [url, ...rest] = positional;
  if (!url || rest.length > 0 || url.startsWith('-') || (expectAt >= 0 && !/^[0-9a-f]{32}$/.test(expectKey ?? ''))) {
    process.stderr.write(
      'usage: npm run verify -- <url> [--expect-key <key id>]   (key id: 32 hex digits; FEDERATION_ALLOW_PRIVATE=1 for loopback or private addresses)\n',
    );
    return 2;
  }
  try {
    const limits = federationLimitsFromEnv(process.env);
    const report = await verifyDeployment(url, createFetcher(limits), expectKey !== undefined ? { expectKey } : {});
    for (const problem of report.problems) process.stdout.write(`MISMATCH ${problem}\n`);
    const summary = `${report.origin}: ${report.records} records and ${report.imports} imports checked`;
    process.stdout.write(
      report.problems.length === 0 ? `${summary}; signature, hashes and provenance verify\n` : `${summary}; ${report.problems.length} mismatches\n`,
    );
    return report.problems.length === 0 ? 0 : 1;
  } catch (error) {
    const code = error instanceof FederationError ? error.code : 'ERROR';
    process.stderr.write(`verification failed (${code}): ${(error as Error).message}\n`);
    return 1;
  }
}

quietOnClosedPipe();
await exitWhenFlushed(await main(process.argv.slice(2)));
