/**
 * `npm run new -- work|record|answer …` (USAGE below): skeletons for contributors, written into
 * CONTENT_DIR (default content/) with the next free id and today's date, never over an
 * existing file or answer. docs/CONTRIBUTING.md walks through them.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pathsFromEnv } from '../core/paths.ts';
import { exitWhenFlushed } from './lib/cli-exit.ts';
import { scaffoldAnswer, scaffoldRecord, scaffoldWork, ScaffoldError, type Scaffolded } from './lib/scaffold.ts';

const USAGE = `usage: npm run new -- <kind> [options]

  work    --title "<title>" --contributor "<name>" [--contributor …] [--ring open] [--layer research]
          [--evidence uncharacterized] [--type essay] [--lineage <concept id> …] [--synthesis] [--id <id>]
  record  --question "<question, verbatim>" --method "<how the answers were obtained>"
          --answer <model_id>=<file> --answer <model_id>=<file> [--answer …] [--answered <date>] [--cluster <name>] [--id <id>]
  answer  --record <record id> --answer <model_id>=<file> [--answered <date>]

Each <file> holds one answer exactly as the model gave it: its bytes are stored verbatim.
--answered is when the model answered (YYYY-MM-DD or an ISO date-time; default today).`;

const options = {
  title: { type: 'string' },
  contributor: { type: 'string', multiple: true },
  ring: { type: 'string' },
  layer: { type: 'string' },
  evidence: { type: 'string' },
  type: { type: 'string' },
  lineage: { type: 'string', multiple: true },
  synthesis: { type: 'boolean' },
  id: { type: 'string' },
  question: { type: 'string' },
  method: { type: 'string' },
  answer: { type: 'string', multiple: true },
  answered: { type: 'string' },
  cluster: { type: 'string' },
  record: { type: 'string' },
  help: { type: 'boolean' },
} as const;

class UsageError extends Error {}

function required<T>(value: T | undefined, name: string): T {
  if (value === undefined || (Array.isArray(value) && value.length === 0)) throw new UsageError(`--${name} is required`);
  return value;
}

function answersOf(values: readonly string[] | undefined) {
  return (values ?? []).map((value) => {
    const at = value.indexOf('=');
    if (at <= 0) throw new UsageError(`--answer takes <model_id>=<file>, not "${value}"`);
    const file = value.slice(at + 1);
    try {
      return { modelId: value.slice(0, at), text: readFileSync(file, 'utf8') };
    } catch (error) {
      throw new UsageError(`cannot read the answer file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  });
}

function run(argv: string[], contentDir: string, today: string): Scaffolded {
  const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  const [kind, ...rest] = positionals;
  if (rest.length > 0) throw new UsageError(`unexpected ${rest.join(' ')}`);
  if (kind === 'work') {
    return scaffoldWork(
      contentDir,
      {
        title: required(values.title, 'title'),
        contributors: required(values.contributor, 'contributor'),
        ring: values.ring,
        layer: values.layer,
        evidence: values.evidence,
        type: values.type,
        lineage: values.lineage,
        synthesis: values.synthesis,
        id: values.id,
      },
      today,
    );
  }
  if (kind === 'record') {
    const answers = answersOf(values.answer);
    return scaffoldRecord(
      contentDir,
      {
        question: required(values.question, 'question'),
        method: required(values.method, 'method'),
        answers,
        answered: values.answered,
        cluster: values.cluster,
        id: values.id,
      },
      today,
    );
  }
  if (kind === 'answer') {
    const answers = answersOf(required(values.answer, 'answer'));
    if (answers.length !== 1) throw new UsageError('answer takes one --answer <model_id>=<file>');
    return scaffoldAnswer(contentDir, { record: required(values.record, 'record'), ...answers[0]!, answered: values.answered }, today);
  }
  throw new UsageError(kind === undefined ? 'which kind: work, record or answer?' : `unknown kind "${kind}"`);
}

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.length === 0) {
  console.log(USAGE);
  await exitWhenFlushed(argv.length === 0 ? 2 : 0);
}
try {
  const written = run(argv, pathsFromEnv().contentDir, new Date().toISOString().slice(0, 10));
  console.log(`wrote ${written.file} (${written.id}); content is valid.`);
  console.log('Next: fill in what the skeleton marks, npm run validate, then npm run check-change -- --base origin/main (docs/CONTRIBUTING.md).');
} catch (error) {
  if (error instanceof UsageError || error instanceof ScaffoldError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`${(error as Error).message}${error instanceof ScaffoldError ? '' : `\n\n${USAGE}`}`);
    await exitWhenFlushed(error instanceof ScaffoldError ? 1 : 2);
  }
  throw error;
}
