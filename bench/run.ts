/** `npm run bench`: every benchmark, one after the other, in one process per benchmark. */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../core/paths.ts';

const benchmarks = ['fast-path.ts', 'scale.ts', 'embed.ts', 'live.ts', 'intent.ts'];
const tsx = path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs');
let failed = false;
for (const name of benchmarks) {
  console.log(`\n# ${name}`);
  const result = spawnSync(process.execPath, [tsx, path.join(REPO_ROOT, 'bench', name)], { stdio: 'inherit' });
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
