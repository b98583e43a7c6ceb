/**
 * `npm run export:records -- [--store <file>] [--content <dir>]`: writes Atlas records
 * persisted by live councils (POST /api/council with persist) into content/divergences/
 * as markdown, ready for a pull request. Records already in the content are left alone.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isSharedStore, openStore } from '../storage/open-store.ts';
import { exitWhenFlushed, quietOnClosedPipe } from './lib/cli-exit.ts';
import { stringifyMarkdown } from '../content-files/frontmatter.ts';
import { pathsFromEnv, REPO_ROOT } from '../core/paths.ts';
import { writeFile } from '../content-files/write.ts';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: process.env.STORE_PATH ?? path.join(REPO_ROOT, '.data', 'polyphony.db') },
    content: { type: 'string', default: pathsFromEnv().contentDir },
  },
});
const storePath = values.store;
quietOnClosedPipe();
if (!isSharedStore(storePath) && !existsSync(storePath)) {
  console.error(`no store at ${storePath} (set --store or STORE_PATH)`);
  await exitWhenFlushed(2);
}
const store = await openStore(storePath);
let written = 0;
for (const record of await store.listRecords()) {
  const file = path.join(values.content, 'divergences', `${record.id}.md`);
  if (existsSync(file)) continue;
  writeFile(file, stringifyMarkdown(record.frontmatter, record.body));
  console.log(`wrote ${path.relative(process.cwd(), file)}`);
  written++;
}
await store.close();
console.log(`${written} record${written === 1 ? '' : 's'} exported; run npm run validate, then commit them for review.`);
