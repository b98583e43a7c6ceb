/**
 * The curator's side: approve or reject pending contributions. Approval writes the item into
 * content/ as valid markdown with full provenance, validates the whole content folder, and
 * only then marks the item approved; a write that would break the build is rolled back.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { recognizeFamily } from '../../core/kin.ts';
import type { ContributionRecord, ContributionsStore } from '../../storage/contributions.ts';
import { stringifyMarkdown } from '../../content-files/frontmatter.ts';
import { ContentError } from '../../content-files/issues.ts';
import { loadContent, type LoadedContent } from '../../content-files/load-content.ts';
import { appendToRegistry, newFamiliesAreFictional, type RegistryAdditions } from '../../content-files/registry-edit.ts';
import { appendToSequence, editFrontmatter } from '../../content-files/yaml-edit.ts';
import { writeFile } from '../../content-files/write.ts';

export interface ApproveOptions {
  by: string;
  note?: string;
  /** Overrides for an answer whose declared identity names no known lineage. */
  family?: string;
  modelId?: string;
  /** Adds a family new to models.yaml as fictional (required in fictional content). */
  fictional?: boolean;
  now?: Date;
}

export interface CurationResult {
  contribution: ContributionRecord;
  files: string[];
}

function slugModelId(identity: string): string {
  return (
    identity
      .trim()
      .toLowerCase()
      .replace(/[^a-z0-9.:-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'declared-model'
  );
}

/** Where a contributed answer's voice sits in the registry, and the family and version to add when new. */
function placeVoice(
  content: Pick<LoadedContent, 'site' | 'registry'>,
  identity: string,
  options: ApproveOptions,
): { family: string; modelId: string; additions: RegistryAdditions } {
  const { registry } = content;
  const additions: RegistryAdditions = { families: [], models: [] };
  const recognition = recognizeFamily(identity, registry);
  const family = options.family ?? recognition.family ?? identity.trim();
  const modelId = options.modelId ?? slugModelId(identity);
  if (!registry.families.some((entry) => entry.name === family)) {
    const fictional = newFamiliesAreFictional(content.site, registry, [family], options.fictional, 'Place the answer in a known family with --family <name>');
    additions.families.push({
      name: family,
      lab: fictional ? 'declared by the contributor (fictional)' : 'declared by the contributor',
      aliases: [],
      fictional,
    });
  }
  const existing = registry.models.find((model) => model.model_id === modelId);
  if (!existing) {
    additions.models.push({ model_id: modelId, family, retired: false });
  } else if (existing.family !== family) {
    throw new Error(`model id ${modelId} belongs to ${existing.family} in models.yaml, not ${family}; pass --model-id`);
  }
  return { family, modelId, additions };
}

function nextSynthesisId(contentDir: string, prefix: string): string {
  let highest = 0;
  for (const folder of ['works', 'proposals']) {
    const dir = path.join(contentDir, folder);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const match = name.match(new RegExp(`^${prefix}-S(\\d+)\\.md$`));
      if (match) highest = Math.max(highest, Number(match[1]));
    }
  }
  return `${prefix}-S${highest + 1}`;
}

export async function approveContribution(store: ContributionsStore, contentDir: string, id: string, options: ApproveOptions): Promise<CurationResult> {
  const item = await store.getContribution(id);
  if (!item) throw new Error(`no contribution ${id}`);
  if (item.status !== 'pending') throw new Error(`${id} is ${item.status}, not pending`);
  const now = options.now ?? new Date();
  const content = loadContent(contentDir);
  const backups = new Map<string, string | null>();
  const write = (file: string, text: string) => {
    if (!backups.has(file)) backups.set(file, existsSync(file) ? readFileSync(file, 'utf8') : null);
    writeFile(file, text);
  };

  if (item.kind === 'answer') {
    const entry = content.divergences.find((candidate) => candidate.data.id === item.record_id);
    if (!entry) throw new Error(`record ${item.record_id} is no longer in ${contentDir}`);
    const voice = placeVoice(content, item.identity, options);
    const registryFile = path.join(contentDir, 'models.yaml');
    if (voice.additions.families.length + voice.additions.models.length > 0)
      write(registryFile, appendToRegistry(readFileSync(registryFile, 'utf8'), voice.additions));
    const file = path.join(contentDir, entry.file);
    const answer = {
      model: voice.family,
      model_id: voice.modelId,
      date: item.created_at,
      text: String(item.payload.answer),
      contributed: { identity: item.identity, justification: item.justification ?? 'missing_voice', approved_at: now.toISOString(), approved_by: options.by },
    };
    write(
      file,
      editFrontmatter(readFileSync(file, 'utf8'), (yaml) => appendToSequence(yaml, ['answers'], answer)),
    );
  } else {
    const newId = nextSynthesisId(contentDir, content.site.id_prefix);
    const sources = (item.payload.sources as string[] | undefined) ?? [];
    const body = `${String(item.payload.text)}${sources.length > 0 ? `\n\nSources: ${sources.join(', ')}` : ''}`;
    write(
      path.join(contentDir, 'proposals', `${newId}.md`),
      stringifyMarkdown(
        {
          id: newId,
          title: String(item.payload.title),
          ring: 'open',
          type: 'synthesis',
          layer: 'canon',
          evidence: String(item.payload.evidence ?? 'interpretive'),
          contributors: [item.identity],
          date: now.toISOString().slice(0, 10),
          lineage: [],
          provenance: {
            identity: item.identity,
            ...(options.note ? { justification: options.note } : {}),
            submitted_at: item.created_at,
            approved_at: now.toISOString(),
            approved_by: options.by,
          },
        },
        body,
      ),
    );
  }

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
  const reviewed = await store.reviewContribution(id, { status: 'approved', reviewer: options.by, reason: options.note ?? 'approved' }, now);
  return { contribution: reviewed!, files: [...backups.keys()].map((file) => path.relative(contentDir, file)) };
}

export async function rejectContribution(store: ContributionsStore, id: string, by: string, reason: string, now = new Date()): Promise<ContributionRecord> {
  const item = await store.getContribution(id);
  if (!item) throw new Error(`no contribution ${id}`);
  if (item.status !== 'pending') throw new Error(`${id} is ${item.status}, not pending`);
  if (reason.trim() === '') throw new Error('a rejection needs a reason');
  return (await store.reviewContribution(id, { status: 'rejected', reviewer: by, reason }, now))!;
}
