/**
 * The curator's side of federation: approve or reject pending imports (docs/FEDERATION.md).
 * Approval writes the record under its origin id with provenance, and the origin's bytes
 * verbatim beside it; the whole content folder is validated before the import is marked
 * approved, and a write that would break the build is rolled back.
 */
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FederationImport, FederationStore } from '../../storage/federation.ts';
import { parseMarkdown } from '../../content-files/frontmatter.ts';
import { ContentError } from '../../content-files/issues.ts';
import { loadContent, type LoadedContent } from '../../content-files/load-content.ts';
import { appendToRegistry, newFamiliesAreFictional, type RegistryAdditions } from '../../content-files/registry-edit.ts';
import { editFrontmatter, setTopLevel } from '../../content-files/yaml-edit.ts';
import { writeFile } from '../../content-files/write.ts';

export interface ImportApproval {
  import: FederationImport;
  files: string[];
  /** Model versions the origin names that models.yaml did not have, added with their family. */
  addedModels: string[];
}

async function pendingImport(store: FederationStore, id: string): Promise<FederationImport> {
  const item = await store.getImport(id);
  if (!item) throw new Error(`no import ${id}`);
  if (item.status !== 'pending') throw new Error(`${id} is ${item.status}, not pending`);
  return item;
}

/** The answers' model versions that the registry lacks, to add under the family the origin names. */
function placeModels(
  content: Pick<LoadedContent, 'site' | 'registry'>,
  answers: readonly Record<string, unknown>[],
  origin: string,
  fictional: boolean | undefined,
): RegistryAdditions {
  const { registry } = content;
  const additions: RegistryAdditions = { families: [], models: [] };
  const families = [...registry.families];
  for (const answer of answers) {
    const modelId = String(answer.model_id);
    const voice = String(answer.model);
    if ([...registry.models, ...additions.models].some((model) => model.model_id === modelId)) continue;
    let family = families.find((entry) => entry.name === voice || entry.aliases.includes(voice.toLowerCase()));
    if (!family) {
      family = { name: voice, lab: typeof answer.lab === 'string' ? answer.lab : `as named by ${origin}`, aliases: [], fictional: false };
      families.push(family);
      additions.families.push(family);
    }
    additions.models.push({ model_id: modelId, family: family.name, retired: false });
  }
  const names = additions.families.map((family) => family.name);
  const asFictional = newFamiliesAreFictional(content.site, registry, names, fictional, 'Reject the import');
  for (const family of additions.families) family.fictional = asFictional;
  return additions;
}

export async function approveImport(
  store: FederationStore,
  contentDir: string,
  id: string,
  options: { by: string; now?: Date; fictional?: boolean },
): Promise<ImportApproval> {
  const item = await pendingImport(store, id);
  const now = options.now ?? new Date();
  const content = loadContent(contentDir);
  if (content.divergences.some((entry) => entry.data.id === item.record_id && !(entry.data.provenance?.federation?.origin_node === item.origin_node))) {
    throw new Error(`content already holds a record ${item.record_id} that is not an import from ${item.origin}; nothing was written`);
  }
  const backups = new Map<string, string | null>();
  const write = (file: string, text: string) => {
    if (!backups.has(file)) backups.set(file, existsSync(file) ? readFileSync(file, 'utf8') : null);
    writeFile(file, text);
  };
  const origin = parseMarkdown(item.markdown);
  const originSource = (origin.data.provenance as { source?: string } | undefined)?.source;
  const federation = { ...item.provenance, approved_at: now.toISOString(), approved_by: options.by };
  const provenance = {
    source: `federation: imported from ${String(item.provenance.origin_name)} (${item.origin})${originSource ? `; at the origin: ${originSource}` : ''}`,
    federation,
  };
  const additions = placeModels(content, (origin.data.answers as Record<string, unknown>[] | undefined) ?? [], item.origin, options.fictional);
  const registryFile = path.join(contentDir, 'models.yaml');
  if (additions.models.length > 0) write(registryFile, appendToRegistry(readFileSync(registryFile, 'utf8'), additions));
  // The record is the origin's bytes with only its provenance entry set.
  write(
    path.join(contentDir, 'divergences', `${item.record_id}.md`),
    editFrontmatter(item.markdown, (yaml) => setTopLevel(yaml, 'provenance', provenance)),
  );
  write(path.join(contentDir, 'federation', `${item.record_id}.md`), item.markdown);

  try {
    loadContent(contentDir);
  } catch (error) {
    for (const [file, previous] of backups) {
      if (previous === null) unlinkSync(file);
      else writeFileSync(file, previous);
    }
    if (error instanceof ContentError) throw new Error(`approval would make the content invalid, nothing was written:\n${error.message}`, { cause: error });
    throw error;
  }
  const reviewed = await store.reviewImport(id, { status: 'approved', reviewer: options.by, reason: 'approved' }, now);
  return {
    import: reviewed!,
    files: [...backups.keys()].map((file) => path.relative(contentDir, file)),
    addedModels: additions.models.map((model) => model.model_id),
  };
}

export async function rejectImport(store: FederationStore, id: string, by: string, reason: string, now = new Date()): Promise<FederationImport> {
  await pendingImport(store, id);
  if (reason.trim() === '') throw new Error('a rejection needs a reason');
  return (await store.reviewImport(id, { status: 'rejected', reviewer: by, reason }, now))!;
}

/** One import for the curator: where it came from, what it asks, and its status. */
export function describeImport(item: FederationImport, full: boolean): string {
  const origin = parseMarkdown(item.markdown);
  const lines = [
    `${item.id}  ${item.status}  ${item.record_id} from ${String(item.provenance.origin_name)} (${item.origin})`,
    `  node: ${item.origin_node}  sha256: ${item.content_hash}  pulled: ${item.staged_at}`,
    `  question: ${String(origin.data.question)}`,
    `  licence: ${String(item.provenance.licence)}; attribution: ${String(item.provenance.attribution)}`,
    ...(item.reviewer ? [`  reviewed by ${item.reviewer} at ${item.reviewed_at}: ${item.reason}`] : []),
  ];
  // The imported text is shown as data, indented, never run or followed.
  if (full) lines.push('  record (verbatim, as pulled):', ...item.markdown.split('\n').map((line) => `  | ${line}`));
  return lines.join('\n');
}
