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
  type AudioTrack,
  type ConceptFrontmatter,
  type DivergenceFrontmatter,
  type ModelRegistry,
  type SiteConfig,
  type WorkFrontmatter,
} from '../../schemas/content.ts';
import { parseMarkdown, parseYaml } from './frontmatter.ts';
import { ContentError, issuesFromZod, type ContentIssue } from './issues.ts';

export interface SourceFile {
  /** Path relative to the content folder, with forward slashes. */
  file: string;
  bytes: Buffer;
}

export interface MarkdownEntry<T> {
  file: string;
  data: T;
  body: string;
  raw: string;
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
  /** Every content file's bytes, for hashing. */
  files: SourceFile[];
}

function listMarkdown(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .sort();
}

export function loadContent(contentDir: string): LoadedContent {
  const dir = path.resolve(contentDir);
  const issues: ContentIssue[] = [];
  const files: SourceFile[] = [];

  const readText = (relative: string): string | undefined => {
    const absolute = path.join(dir, relative);
    if (!existsSync(absolute)) {
      issues.push({ file: relative, field: '(file)', message: 'is missing' });
      return undefined;
    }
    const bytes = readFileSync(absolute);
    files.push({ file: relative, bytes });
    return bytes.toString('utf8');
  };

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

  function readMarkdownFolder<S extends z.ZodType>(folder: string, schema: S): MarkdownEntry<z.infer<S>>[] {
    const entries: MarkdownEntry<z.infer<S>>[] = [];
    for (const name of listMarkdown(path.join(dir, folder))) {
      const relative = `${folder}/${name}`;
      const raw = readText(relative);
      if (raw === undefined) continue;
      let parsed;
      try {
        parsed = parseMarkdown(raw);
      } catch (error) {
        issues.push({ file: relative, field: '(frontmatter)', message: `is not valid YAML: ${(error as Error).message}` });
        continue;
      }
      const data = parseWith(relative, schema, parsed.data);
      if (data !== undefined) entries.push({ file: relative, data, body: parsed.body, raw });
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
      return { ...entry, audioFile: audioPath };
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

  if (registry) checkRegistry(registry, issues);
  checkCrossReferences({ works, proposals, divergences, concepts, registry, audio }, issues);

  if (issues.length > 0 || !registry) throw new ContentError(issues);
  files.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return { dir, site, registry, works, proposals, divergences, concepts, audio, pages, claims, files };
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

interface CrossReferenceInput {
  works: MarkdownEntry<WorkFrontmatter>[];
  proposals: MarkdownEntry<WorkFrontmatter>[];
  divergences: MarkdownEntry<DivergenceFrontmatter>[];
  concepts: MarkdownEntry<ConceptFrontmatter>[];
  audio: MarkdownEntry<AudioTrack>[];
  registry: ModelRegistry | undefined;
}

function checkCrossReferences(input: CrossReferenceInput, issues: ContentIssue[]): void {
  const seen = new Map<string, string>();
  const claimId = (id: string, file: string) => {
    const previous = seen.get(id);
    if (previous) issues.push({ file, field: 'id', message: `duplicate id "${id}", also used by ${previous}` });
    else seen.set(id, file);
  };
  const expectFileName = (entry: MarkdownEntry<{ id: string }>) => {
    const expected = `${entry.data.id}.md`;
    if (path.posix.basename(entry.file) !== expected) {
      issues.push({ file: entry.file, field: 'id', message: `file must be named ${expected} after its id` });
    }
  };
  for (const entry of [...input.works, ...input.proposals, ...input.divergences]) {
    claimId(entry.data.id, entry.file);
    expectFileName(entry);
  }
  const conceptIds = new Set<string>();
  for (const entry of input.concepts) {
    if (conceptIds.has(entry.data.id)) issues.push({ file: entry.file, field: 'id', message: `duplicate concept id "${entry.data.id}"` });
    conceptIds.add(entry.data.id);
    expectFileName(entry);
  }
  for (const entry of input.concepts) {
    entry.data.related.forEach((related, index) => {
      if (!conceptIds.has(related)) {
        issues.push({ file: entry.file, field: `related.${index}`, message: `"${related}" is not a concept id in content/concepts/` });
      }
    });
  }
  for (const entry of [...input.works, ...input.proposals]) {
    entry.data.lineage.forEach((concept, index) => {
      if (!conceptIds.has(concept)) {
        issues.push({ file: entry.file, field: `lineage.${index}`, message: `"${concept}" is not a concept id in content/concepts/` });
      }
    });
  }
  const slugs = new Set<string>();
  for (const entry of input.audio) {
    if (slugs.has(entry.data.slug)) issues.push({ file: entry.file, field: 'slug', message: `duplicate audio slug "${entry.data.slug}"` });
    slugs.add(entry.data.slug);
    if (path.posix.basename(entry.file) !== `${entry.data.slug}.md`) {
      issues.push({ file: entry.file, field: 'slug', message: `file must be named ${entry.data.slug}.md after its slug` });
    }
  }

  const divergenceById = new Map(input.divergences.map((entry) => [entry.data.id, entry]));
  const models = new Map((input.registry?.models ?? []).map((model) => [model.model_id, model]));
  for (const entry of input.divergences) {
    const { re_elicits: original } = entry.data;
    if (original !== undefined) {
      const target = divergenceById.get(original);
      if (!target) {
        issues.push({ file: entry.file, field: 're_elicits', message: `points to "${original}", which is not a divergence record` });
      } else if (original === entry.data.id) {
        issues.push({ file: entry.file, field: 're_elicits', message: 'a record cannot re-elicit itself' });
      }
    }
    const registry = input.registry;
    if (!registry) continue;
    entry.data.answers.forEach((answer, index) => {
      const model = models.get(answer.model_id);
      if (!model) {
        issues.push({
          file: entry.file,
          field: `answers.${index}.model_id`,
          message: `"${answer.model_id}" is not in models.yaml; add it there with its family`,
        });
      } else if (!voiceBelongsToFamily(answer.model, model.family, registry)) {
        issues.push({
          file: entry.file,
          field: `answers.${index}.model`,
          message: `"${answer.model}" is neither the family of ${answer.model_id} in models.yaml ("${model.family}") nor one of its aliases`,
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
