/**
 * Fits calibrated relevance and its floors on a judged question set over a content folder,
 * and reports each family on both halves of the set (scripts/lib/relevance-calibration.ts):
 *
 *   npm run calibrate:relevance -- --content <dir> --set <judged-set.json> [--artifacts <dir>] [--write]
 *
 * With --write the fit goes into <content>/relevance-calibration.json, which the next build
 * uses and serves at /relevance-calibration.json; without it nothing is written.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadCorpus } from '../api/load-artifacts.ts';
import { artifactPaths } from '../core/artifacts.ts';
import { pathsFromEnv } from '../core/paths.ts';
import { RELEVANCE_CALIBRATION_FILE } from '../core/search/relevance.ts';
import { withQueryCache } from '../providers/embedder.ts';
import { createConfiguredEmbedder, EmbeddingsConfigError } from '../providers/embeddings-config.ts';
import { buildArtifacts } from './build.ts';
import { exitWhenFlushed } from './lib/cli-exit.ts';
import { askAll, familyFigures, fitRelevanceModel, gatherCandidates, loadRelevanceSet, renderFigures } from './lib/relevance-calibration.ts';

const USAGE = `usage: calibrate-relevance --content <content-dir> --set <judged-set.json> [--artifacts <dir>] [--write]

  --content    the deployment's content folder
  --set        judged questions: {about, questions: [{id, family: answers|off_corpus|contested,
               split: calibrate|holdout, question, expect: [record ids]}]} (bench/relevance-set.json)
  --artifacts  a build of that content to reuse (default: built into a temporary folder)
  --write      write the fit to <content>/${RELEVANCE_CALIBRATION_FILE}`;

export async function runCli(argv: readonly string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        content: { type: 'string' },
        set: { type: 'string' },
        artifacts: { type: 'string' },
        write: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    console.error(`calibrate-relevance: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!values.content || !values.set) {
    console.error(`calibrate-relevance: --content and --set are required\n${USAGE}`);
    return 2;
  }
  const contentDir = path.resolve(values.content);
  const set = loadRelevanceSet(path.resolve(values.set));
  const temporary = values.artifacts === undefined ? mkdtempSync(path.join(os.tmpdir(), 'polyphony-relevance-')) : undefined;
  const artifactsDir = path.resolve(values.artifacts ?? temporary!);
  try {
    // The embedder EMBEDDINGS_CONFIG names, else USE-lite: the fit is for the one the server asks with, and records its id.
    const embedder = withQueryCache((await createConfiguredEmbedder(process.env)).embedder);
    console.log(`embedding with ${embedder.id}`);
    if (!existsSync(artifactPaths(artifactsDir).manifest)) {
      await buildArtifacts({ contentDir, artifactsDir, cacheDir: pathsFromEnv().cacheDir, embedder });
    }
    const calibrate = set.questions.filter((question) => question.split === 'calibrate');
    const before = await loadCorpus(artifactsDir, embedder);
    const found = await gatherCandidates(before, calibrate);
    const model = fitRelevanceModel(calibrate, found, embedder.id, `${path.basename(values.set)} (calibrate half)`);
    const corpus = await loadCorpus(artifactsDir, embedder, undefined, { relevance: model });
    console.log(`Fitted on the calibrate half (${calibrate.length} questions):\n${JSON.stringify(model, null, 2)}\n`);
    // Before: no calibrated floor (the relative rule alone, as before calibrated relevance);
    // after: the fit; and the fit without the relative rule, to show what that rule still adds.
    // No question gate in any: content with its own fit gets none (retrieval-choice.ts).
    const configurations = [
      { label: 'no floors', figures: familyFigures(await askAll(corpus, set.questions, { floors: { relevant: 0, atlas: 0 }, questionGate: 0 })) },
      { label: 'floors', figures: familyFigures(await askAll(corpus, set.questions, { questionGate: 0 })) },
      { label: 'floors, no ratio', figures: familyFigures(await askAll(corpus, set.questions, { atlasRatio: 0, questionGate: 0 })) },
    ];
    console.log(renderFigures(configurations));
    if (values.write) {
      const file = path.join(contentDir, RELEVANCE_CALIBRATION_FILE);
      writeFileSync(file, `${JSON.stringify(model, null, 2)}\n`);
      console.log(`\nwritten to ${file}: rebuild to apply it`);
    }
    return 0;
  } finally {
    if (temporary) rmSync(temporary, { recursive: true, force: true });
  }
}

const invokedDirectly = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  // TensorFlow keeps handles open: exit explicitly, once the report has drained.
  runCli(process.argv.slice(2)).then(exitWhenFlushed, (error: unknown) => {
    console.error(`calibrate-relevance: ${error instanceof Error ? error.message : String(error)}`);
    // A configuration the embedder cannot start from is the caller's to fix, as for the build (exit 2).
    return exitWhenFlushed(error instanceof EmbeddingsConfigError ? 2 : 1);
  });
}
