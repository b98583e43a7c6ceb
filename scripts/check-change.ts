/**
 * `npm run check-change -- --base <git ref> [--content <dir>] [--override "<reason>"]`:
 * what a pull request does to content/, grouped for the curator; refuses rewrites of the
 * record (docs/CONTRIBUTING.md). Runs offline; the base must be a commit in this clone.
 */
import { parseArgs } from 'node:util';
import { pathsFromEnv } from '../core/paths.ts';
import { runChangeCheck } from './lib/check-change.ts';
import { exitWhenFlushed, quietOnClosedPipe } from './lib/cli-exit.ts';

quietOnClosedPipe();
const usage = 'usage: npm run check-change -- --base <git ref> [--content <dir>] [--override "<reason, in words>"]';
let values: { base?: string; content?: string; override?: string };
try {
  ({ values } = parseArgs({ options: { base: { type: 'string' }, content: { type: 'string' }, override: { type: 'string' } }, strict: true }));
} catch (error) {
  console.error(`${(error as Error).message}\n${usage}`);
  await exitWhenFlushed(2);
}
if (!values!.base) {
  console.error(`--base is required\n${usage}`);
  await exitWhenFlushed(2);
}
const outcome = runChangeCheck({ contentDir: values!.content ?? pathsFromEnv().contentDir, base: values!.base!, override: values!.override });
if (outcome.code === 0) console.log(outcome.text);
else console.error(outcome.text);
await exitWhenFlushed(outcome.code);
