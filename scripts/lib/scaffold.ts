/**
 * `npm run new -- work|record|answer …`: a valid skeleton for a contributor, with the next
 * free id, today's date and every required field. It never overwrites a file or an answer, and
 * a write that would not validate is rolled back (nothing is left half-written).
 */
import { existsSync, readFileSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ContentError } from '../../content-files/issues.ts';
import { loadContent, type LoadedContent } from '../../content-files/load-content.ts';
import { stringifyMarkdown } from '../../content-files/frontmatter.ts';
import { writeFile } from '../../content-files/write.ts';
import { appendToSequence, editFrontmatter } from '../../content-files/yaml-edit.ts';

export class ScaffoldError extends Error {}

export interface WorkOptions {
  title: string;
  contributors: string[];
  ring?: string;
  layer?: string;
  evidence?: string;
  type?: string;
  lineage?: string[];
  /** A synthesis: `<PFX>-S<n>`, type synthesis, layer canon. */
  synthesis?: boolean;
  id?: string;
}

export interface AnswerInput {
  modelId: string;
  /** The verbatim answer: the bytes of the contributor's file, exactly. */
  text: string;
}

export interface RecordOptions {
  question: string;
  method: string;
  answers: AnswerInput[];
  /** When the answers were given (date or date-time); today when absent. */
  answered?: string;
  cluster?: string;
  id?: string;
}

export interface AnswerOptions extends AnswerInput {
  record: string;
  answered?: string;
}

export interface Scaffolded {
  id: string;
  /** Path relative to the content folder. */
  file: string;
}

/** The next number after the highest `<PFX>-<series><n>` file in the folders. */
export function nextId(contentDir: string, prefix: string, series: '' | 'S' | 'D', folders: readonly string[]): string {
  const pattern = new RegExp(`^${prefix}-${series}(\\d+)\\.md$`);
  let highest = 0;
  for (const folder of folders) {
    const dir = path.join(contentDir, folder);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const match = pattern.exec(name);
      if (match) highest = Math.max(highest, Number(match[1]));
    }
  }
  return `${prefix}-${series}${highest + 1}`;
}

function load(contentDir: string): LoadedContent {
  try {
    return loadContent(contentDir);
  } catch (error) {
    if (error instanceof ContentError) throw new ScaffoldError(`the content is not valid before the change; fix it first:\n${error.message}`);
    throw error;
  }
}

/** Writes the file, validates the whole folder, and restores the file's previous state on failure. */
function writeValidated(contentDir: string, relative: string, text: string, previous: string | null): void {
  const file = path.join(contentDir, relative);
  writeFile(file, text);
  try {
    loadContent(contentDir);
  } catch (error) {
    if (previous === null) unlinkSync(file);
    else writeFileSync(file, previous);
    if (error instanceof ContentError) throw new ScaffoldError(`the skeleton would not validate, nothing was written:\n${error.message}`);
    throw error;
  }
}

function refuseExisting(contentDir: string, content: LoadedContent, id: string, relative: string): void {
  const taken = [...content.works, ...content.proposals, ...content.divergences].some((entry) => entry.data.id === id);
  if (taken || existsSync(path.join(contentDir, relative))) throw new ScaffoldError(`${relative} (${id}) already exists; nothing was written`);
}

export function scaffoldWork(contentDir: string, options: WorkOptions, today: string): Scaffolded {
  const content = load(contentDir);
  const prefix = content.site.id_prefix;
  const id = options.id ?? nextId(contentDir, prefix, options.synthesis ? 'S' : '', ['works', 'proposals']);
  const file = `works/${id}.md`;
  refuseExisting(contentDir, content, id, file);
  const data = {
    id,
    title: options.title,
    ring: options.ring ?? 'open',
    type: options.type ?? (options.synthesis ? 'synthesis' : 'essay'),
    layer: options.layer ?? (options.synthesis ? 'canon' : 'research'),
    evidence: options.evidence ?? 'uncharacterized',
    contributors: options.contributors,
    date: today,
    lineage: options.lineage ?? [],
  };
  writeValidated(contentDir, file, stringifyMarkdown(data, '<!-- The text of the work, in markdown. Cite what it rests on. -->\n'), null);
  return { id, file };
}

function answerOf(content: LoadedContent, input: AnswerInput, date: string) {
  const model = content.registry.models.find((entry) => entry.model_id === input.modelId);
  if (!model) throw new ScaffoldError(`"${input.modelId}" is not a model_id in models.yaml; add the version there first (docs/CONTENT.md)`);
  if (input.text.trim() === '') throw new ScaffoldError(`the answer of ${input.modelId} is empty`);
  const family = content.registry.families.find((entry) => entry.name === model.family);
  return { model: model.family, model_id: model.model_id, ...(family ? { lab: family.lab } : {}), date, text: input.text };
}

export function scaffoldRecord(contentDir: string, options: RecordOptions, today: string): Scaffolded {
  const content = load(contentDir);
  if (options.answers.length < 2) throw new ScaffoldError('a record needs at least two answers (--answer <model_id>=<file>, twice or more)');
  const id = options.id ?? nextId(contentDir, content.site.id_prefix, 'D', ['divergences']);
  const file = `divergences/${id}.md`;
  refuseExisting(contentDir, content, id, file);
  const data = {
    id,
    date: today,
    question: options.question,
    ...(options.cluster ? { cluster: options.cluster } : {}),
    method: options.method,
    answers: options.answers.map((answer) => answerOf(content, answer, options.answered ?? today)),
    tensions: [],
  };
  writeValidated(contentDir, file, stringifyMarkdown(data, '## Shared ground\n\n<!-- Optional: what the answers agree on. -->\n'), null);
  return { id, file };
}

/** Appends one answer at the end of a record's answers: no other line of the file changes. */
export function scaffoldAnswer(contentDir: string, options: AnswerOptions, today: string): Scaffolded {
  const content = load(contentDir);
  const entry = content.divergences.find((candidate) => candidate.data.id === options.record);
  if (!entry) throw new ScaffoldError(`no record ${options.record} in ${contentDir}`);
  if (entry.data.answers.some((answer) => answer.model_id === options.modelId))
    throw new ScaffoldError(
      `${options.record} already holds an answer of ${options.modelId}; answers are never replaced (put the question again in a re-elicitation)`,
    );
  const answer = answerOf(content, options, options.answered ?? today);
  const previous = readFileSync(path.join(contentDir, entry.file), 'utf8');
  writeValidated(
    contentDir,
    entry.file,
    editFrontmatter(previous, (yaml) => appendToSequence(yaml, ['answers'], answer)),
    previous,
  );
  return { id: options.record, file: entry.file };
}
