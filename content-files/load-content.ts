/**
 * Reads a content folder, validates every file against schemas/content.ts and the
 * cross-file rules (unique ids, references that resolve), and returns typed content.
 * Throws ContentError listing every problem at once, each naming file and field.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import {
  AudioTrackSchema,
  ClaimsFileSchema,
  ConceptSchema,
  createDivergenceSchema,
  createWorkSchema,
  ModelRegistrySchema,
  PageSchema,
  REQUIRED_PAGES,
  SiteConfigSchema,
  TensionFileSchema,
  TensionMergesFileSchema,
  type AudioTrack,
  type ConceptFrontmatter,
  type DivergenceFrontmatter,
  type ModelRegistry,
  type SiteConfig,
  type TensionFile,
  type TensionMergeDecision,
  type WorkFrontmatter,
} from '../schemas/content.ts';
import { RELEVANCE_CALIBRATION_FILE, RelevanceModelSchema, type RelevanceModel } from '../core/search/relevance.ts';
import { CALIBRATION_FILE, CalibrationFileSchema, EVIDENCE_FILE_SUFFIX, type CalibrationFile } from '../schemas/certification.ts';
import { checkEvidenceFile, NEGATIVE_CONTROLS } from './evidence-log.ts';
import { checkTensionFiles, checkTensionMerges, TENSION_MERGES_FILE } from './tension-files.ts';
import { parseMarkdown, parseYaml, type ParsedMarkdown } from './frontmatter.ts';
import type { ContentMemo } from './content-memo.ts';
import { detachStrings, packBodyText, withFileText } from './lazy-text.ts';
import type { BodyText } from '../core/records.ts';
import { ContentError, issuesFromZod, type ContentIssue } from './issues.ts';

export interface SourceFile {
  /** Path relative to the content folder, with forward slashes. */
  file: string;
  bytes: Buffer;
}

export interface MarkdownEntry<T> {
  file: string;
  data: T;
  /** Read from the file's bytes when asked (lazy-text.ts): read it once where it is used more than once. */
  readonly body: string;
  readonly raw: string;
  /** For works and proposals read through a memo: what the body gives (records.ts's bodyText). */
  bodyText?: BodyText;
}

export interface LoadedContent {
  dir: string;
  site: SiteConfig;
  registry: ModelRegistry;
  /** Seed works (content/works/). */
  works: MarkdownEntry<WorkFrontmatter>[];
  /** Approved proposals merged into the corpus (content/proposals/). */
  proposals: MarkdownEntry<WorkFrontmatter>[];
  divergences: MarkdownEntry<DivergenceFrontmatter>[];
  concepts: MarkdownEntry<ConceptFrontmatter>[];
  audio: (MarkdownEntry<AudioTrack> & { audioFile?: string })[];
  pages: Record<string, MarkdownEntry<z.infer<typeof PageSchema>>>;
  claims: z.infer<typeof ClaimsFileSchema>['claims'];
  /** Curators' dispositions of tensions (content/tensions/<key>.yaml), by tension key. */
  tensions: { file: string; data: TensionFile }[];
  /** How well this Atlas's instrument sees splits (`npm run certify -- --calibrate`), when measured. */
  calibration?: CalibrationFile;
  /** relevance-calibration.json: the deployment's own fit of calibrated relevance (npm run calibrate:relevance). */
  relevance?: RelevanceModel;
  /** Curators' decisions on tension merges (content/tension-merges.yaml), oldest first. */
  tensionMerges: TensionMergeDecision[];
  /** Every content file's bytes, for hashing. */
  files: SourceFile[];
}

function listMarkdown(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .sort();
}

export interface LoadOptions {
  /** Front matter and body text kept from the previous build, by each file's bytes (content-memo.ts). */
  memo?: ContentMemo;
}

export function loadContent(contentDir: string, options: LoadOptions = {}): LoadedContent {
  const { memo } = options;
  const dir = path.resolve(contentDir);
  const issues: ContentIssue[] = [];
  const files: SourceFile[] = [];

  const readBytes = (relative: string): Buffer | undefined => {
    const absolute = path.join(dir, relative);
    if (!existsSync(absolute)) {
      issues.push({ file: relative, field: '(file)', message: 'is missing' });
      return undefined;
    }
    const bytes = readFileSync(absolute);
    files.push({ file: relative, bytes });
    return bytes;
  };
  const readText = (relative: string): string | undefined => readBytes(relative)?.toString('utf8');

  function parseWith<S extends z.ZodType>(relative: string, schema: S, value: unknown): z.infer<S> | undefined {
    const result = schema.safeParse(value);
    if (!result.success) {
      issues.push(...issuesFromZod(relative, result.error));
      return undefined;
    }
    return result.data;
  }

  function readYamlFile<S extends z.ZodType>(relative: string, schema: S): z.infer<S> | undefined {
    const text = readText(relative);
    if (text === undefined) return undefined;
    try {
      return parseWith(relative, schema, parseYaml(text));
    } catch (error) {
      issues.push({ file: relative, field: '(file)', message: `is not valid YAML: ${(error as Error).message}` });
      return undefined;
    }
  }

  const raw: RawEntry[] = [];

  function readMarkdownFolder<S extends z.ZodType>(folder: string, schema: S): MarkdownEntry<z.infer<S>>[] {
    const entries: MarkdownEntry<z.infer<S>>[] = [];
    for (const name of listMarkdown(path.join(dir, folder))) {
      const relative = `${folder}/${name}`;
      const bytes = readBytes(relative);
      if (bytes === undefined) continue;
      const text = bytes.toString('utf8');
      let parsed: ParsedMarkdown & { bodyText?: BodyText };
      try {
        parsed = memo ? memo.read(text, parseMarkdown, folder === 'works' || folder === 'proposals') : parseMarkdown(text);
      } catch (error) {
        issues.push({ file: relative, field: '(frontmatter)', message: `is not valid YAML: ${(error as Error).message}` });
        continue;
      }
      // Its strings copied out of the file's text, which a slice of it would otherwise keep whole (lazy-text.ts).
      detachStrings(parsed.data);
      raw.push({ folder, file: relative, data: parsed.data });
      const data = parseWith(relative, schema, parsed.data);
      // The file's text, its body and a work's passages are kept as bytes until read (lazy-text.ts).
      if (data !== undefined) {
        entries.push(withFileText({ file: relative, data, ...(parsed.bodyText ? { bodyText: packBodyText(parsed.bodyText) } : {}) }, bytes, text, parsed.body));
      }
    }
    return entries;
  }

  const site = readYamlFile('site.yaml', SiteConfigSchema);
  if (!site) throw new ContentError(issues);
  const registry = readYamlFile('models.yaml', ModelRegistrySchema);
  const works = readMarkdownFolder('works', createWorkSchema(site.id_prefix));
  const proposals = readMarkdownFolder('proposals', createWorkSchema(site.id_prefix));
  const divergences = readMarkdownFolder('divergences', createDivergenceSchema(site.id_prefix));
  const concepts = readMarkdownFolder('concepts', ConceptSchema);
  const audio = readMarkdownFolder('audio', AudioTrackSchema).map((entry) => {
    const stream = entry.data.stream_url;
    if (stream && !/^https?:\/\//.test(stream)) {
      const audioPath = `audio/${stream}`;
      if (!/^[\w.-]+$/.test(stream) || !existsSync(path.join(dir, audioPath))) {
        issues.push({ file: entry.file, field: 'stream_url', message: `names "${stream}", which is not a file in content/audio/` });
        return entry;
      }
      return Object.assign(entry, { audioFile: audioPath });
    }
    return entry;
  });
  const pages: LoadedContent['pages'] = {};
  for (const name of REQUIRED_PAGES) {
    const relative = `pages/${name}.md`;
    const raw = readText(relative);
    if (raw === undefined) continue;
    const parsed = parseMarkdown(raw);
    const data = parseWith(relative, PageSchema, parsed.data);
    if (data) pages[name] = { file: relative, data, body: parsed.body, raw };
  }
  const claims = readYamlFile('claims.yaml', ClaimsFileSchema)?.claims ?? [];
  const tensions: LoadedContent['tensions'] = [];
  if (existsSync(path.join(dir, 'tensions'))) {
    for (const name of readdirSync(path.join(dir, 'tensions'))
      .filter((entry) => entry.endsWith('.yaml'))
      .sort()) {
      const data = readYamlFile(`tensions/${name}`, TensionFileSchema);
      if (data) tensions.push({ file: `tensions/${name}`, data });
    }
  }

  /** An optional JSON file of the content folder, validated; undefined when absent or invalid (an issue then). */
  const readOptionalJson = <S extends z.ZodType>(file: string, schema: S): z.infer<S> | undefined => {
    if (!existsSync(path.join(dir, file))) return undefined;
    const text = readText(file);
    try {
      return text === undefined ? undefined : parseWith(file, schema, JSON.parse(text));
    } catch (error) {
      issues.push({ file, field: '(file)', message: `is not valid JSON: ${(error as Error).message}` });
      return undefined;
    }
  };
  const calibration = readOptionalJson(CALIBRATION_FILE, CalibrationFileSchema);
  const relevance = readOptionalJson(RELEVANCE_CALIBRATION_FILE, RelevanceModelSchema);
  // Optional: absent until a curator decides a merge.
  const tensionMerges = existsSync(path.join(dir, TENSION_MERGES_FILE)) ? (readYamlFile(TENSION_MERGES_FILE, TensionMergesFileSchema)?.decisions ?? []) : [];

  if (registry) checkRegistry(registry, issues);
  checkCrossReferences(raw, registry, issues);
  checkEvidenceLogs(dir, new Set(divergences.map((entry) => entry.data.id)), issues);
  checkTensionFiles(tensions, divergences, issues);
  checkTensionMerges(tensionMerges, divergences, issues);

  if (issues.length > 0 || !registry) throw new ContentError(issues);
  files.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return {
    dir,
    site,
    registry,
    works,
    proposals,
    divergences,
    concepts,
    audio,
    pages,
    claims,
    tensions,
    tensionMerges,
    ...(calibration ? { calibration } : {}),
    ...(relevance ? { relevance } : {}),
    files,
  };
}

/** Certification evidence beside the records (`divergences/<id>.certification.jsonl`): valid lines, known records. */
function checkEvidenceLogs(dir: string, ids: ReadonlySet<string>, issues: ContentIssue[]): void {
  const folder = path.join(dir, 'divergences');
  if (!existsSync(folder)) return;
  for (const name of readdirSync(folder)
    .filter((entry) => entry.endsWith(EVIDENCE_FILE_SUFFIX))
    .sort()) {
    const file = `divergences/${name}`;
    const subject = name.slice(0, -EVIDENCE_FILE_SUFFIX.length);
    if (subject !== NEGATIVE_CONTROLS && !ids.has(subject))
      issues.push({ file, field: '(file)', message: `is evidence for ${subject}, which is not a divergence record` });
    for (const problem of checkEvidenceFile(path.join(dir, file))) issues.push({ file, ...problem });
  }
}

function checkRegistry(registry: ModelRegistry, issues: ContentIssue[]): void {
  const families = new Set(registry.families.map((family) => family.name));
  const modelIds = new Set<string>();
  registry.models.forEach((model, index) => {
    if (modelIds.has(model.model_id)) {
      issues.push({ file: 'models.yaml', field: `models.${index}.model_id`, message: `duplicate model_id "${model.model_id}"` });
    }
    modelIds.add(model.model_id);
    if (!families.has(model.family)) {
      issues.push({
        file: 'models.yaml',
        field: `models.${index}.family`,
        message: `unknown family "${model.family}"; families: ${[...families].join(', ')}`,
      });
    }
  });
  registry.models.forEach((model, index) => {
    if (model.superseded_by && !modelIds.has(model.superseded_by)) {
      issues.push({
        file: 'models.yaml',
        field: `models.${index}.superseded_by`,
        message: `"${model.superseded_by}" is not a model_id in models.yaml`,
      });
    }
  });
}

interface RawEntry {
  folder: string;
  file: string;
  data: Record<string, unknown>;
}

const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const asRecord = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/**
 * Rules that span files. They read the raw frontmatter, so a file that also fails its
 * schema still gets every cross-file problem reported in the same run.
 */
function checkCrossReferences(entries: readonly RawEntry[], registry: ModelRegistry | undefined, issues: ContentIssue[]): void {
  const inFolder = (...folders: string[]) => entries.filter((entry) => folders.includes(entry.folder));
  const records = inFolder('works', 'proposals', 'divergences');
  const concepts = inFolder('concepts');

  const seen = new Map<string, string>();
  for (const entry of records) {
    const id = asString(entry.data.id);
    if (id === undefined) continue;
    const previous = seen.get(id);
    if (previous) issues.push({ file: entry.file, field: 'id', message: `duplicate id "${id}", also used by ${previous}` });
    else seen.set(id, entry.file);
    if (path.posix.basename(entry.file) !== `${id}.md`) {
      issues.push({ file: entry.file, field: 'id', message: `file must be named ${id}.md after its id` });
    }
  }

  const conceptIds = new Set<string>();
  for (const entry of concepts) {
    const id = asString(entry.data.id);
    if (id === undefined) continue;
    if (conceptIds.has(id)) issues.push({ file: entry.file, field: 'id', message: `duplicate concept id "${id}"` });
    conceptIds.add(id);
    if (path.posix.basename(entry.file) !== `${id}.md`) {
      issues.push({ file: entry.file, field: 'id', message: `file must be named ${id}.md after its id` });
    }
  }
  const checkConceptList = (entry: RawEntry, field: string) => {
    asArray(entry.data[field]).forEach((value, index) => {
      if (typeof value === 'string' && !conceptIds.has(value)) {
        issues.push({ file: entry.file, field: `${field}.${index}`, message: `"${value}" is not a concept id in content/concepts/` });
      }
    });
  };
  for (const entry of concepts) checkConceptList(entry, 'related');
  for (const entry of inFolder('works', 'proposals')) checkConceptList(entry, 'lineage');

  const slugs = new Set<string>();
  for (const entry of inFolder('audio')) {
    const slug = asString(entry.data.slug);
    if (slug === undefined) continue;
    if (slugs.has(slug)) issues.push({ file: entry.file, field: 'slug', message: `duplicate audio slug "${slug}"` });
    slugs.add(slug);
    if (path.posix.basename(entry.file) !== `${slug}.md`) {
      issues.push({ file: entry.file, field: 'slug', message: `file must be named ${slug}.md after its slug` });
    }
  }

  const divergenceIds = new Set(
    inFolder('divergences')
      .map((entry) => asString(entry.data.id))
      .filter(Boolean),
  );
  const models = new Map((registry?.models ?? []).map((model) => [model.model_id, model]));
  for (const entry of inFolder('divergences')) {
    const original = asString(entry.data.re_elicits);
    if (original !== undefined) {
      if (!divergenceIds.has(original)) {
        issues.push({ file: entry.file, field: 're_elicits', message: `points to "${original}", which is not a divergence record` });
      } else if (original === entry.data.id) {
        issues.push({ file: entry.file, field: 're_elicits', message: 'a record cannot re-elicit itself' });
      }
    }
    const answers = asArray(entry.data.answers).map(asRecord);
    const voices = new Set(answers.map((answer) => asString(answer.model)).filter(Boolean));
    asArray(entry.data.tensions)
      .map(asRecord)
      .forEach((tension, index) => {
        for (const key of ['voice_a', 'voice_b']) {
          const voice = asString(tension[key]);
          if (voice !== undefined && !voices.has(voice)) {
            issues.push({
              file: entry.file,
              field: `tensions.${index}.${key}`,
              message: `voice "${voice}" did not answer this question; voices that answered: ${[...voices].join(', ')}`,
            });
          }
        }
      });
    if (!registry) continue;
    answers.forEach((answer, index) => {
      const modelId = asString(answer.model_id);
      const voice = asString(answer.model);
      if (modelId === undefined || voice === undefined) return;
      const model = models.get(modelId);
      if (!model) {
        issues.push({ file: entry.file, field: `answers.${index}.model_id`, message: `"${modelId}" is not in models.yaml; add it there with its family` });
      } else if (!voiceBelongsToFamily(voice, model.family, registry)) {
        issues.push({
          file: entry.file,
          field: `answers.${index}.model`,
          message: `"${voice}" is neither the family of ${modelId} in models.yaml ("${model.family}") nor one of its aliases`,
        });
      }
    });
  }
}

function voiceBelongsToFamily(voice: string, familyName: string, registry: ModelRegistry): boolean {
  if (voice === familyName) return true;
  const family = registry.families.find((candidate) => candidate.name === familyName);
  const lowered = voice.toLowerCase();
  return family?.aliases.some((alias) => alias.toLowerCase() === lowered) ?? false;
}
