/** `npm run validate`: checks a content folder and lists every problem, for contributors and CI. */
import { exitWhenFlushed } from './lib/cli-exit.ts';
import { ContentError } from '../content-files/issues.ts';
import { loadContent } from '../content-files/load-content.ts';
import { pathsFromEnv } from '../core/paths.ts';

const contentDir = process.argv[2] ?? pathsFromEnv().contentDir;
try {
  const content = loadContent(contentDir);
  console.log(
    `content is valid: ${content.works.length} works, ${content.proposals.length} approved proposals, ` +
      `${content.divergences.length} divergence records, ${content.concepts.length} concepts, ${content.audio.length} audio tracks (${contentDir})`,
  );
} catch (error) {
  if (error instanceof ContentError) {
    console.error(error.message);
    // Every problem is listed, which can be long: exit only once stderr has drained.
    await exitWhenFlushed(1);
  }
  throw error;
}
