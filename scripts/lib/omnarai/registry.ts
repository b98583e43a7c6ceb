/** The model registry (models.yaml) derived from the answers, retirements, and tension voices resolved against it. */
import { ModelRegistrySchema, type ModelRegistry } from '../../../schemas/content.ts';
import { stringifyYaml } from '../../../content-files/frontmatter.ts';
import type { Normalization } from './report.ts';
import type { SourceAnswer } from './sources.ts';

/** A version to mark retired in the derived registry (the data cannot know retirements). */
export interface Retirement {
  model_id: string;
  superseded_by?: string;
}

/**
 * Families from the answers: one per lab; its name is the shortest model label used with
 * that lab (GPT beside GPT-4o); aliases are the other labels, the name and every model_id,
 * lower-cased. Versions are never known retired from the data alone.
 */
export function deriveRegistry(answers: readonly SourceAnswer[], retirements: readonly Retirement[] = []): ModelRegistry {
  const byLab = new Map<string, { labels: Set<string>; modelIds: Set<string> }>();
  const labOfModel = new Map<string, string>();
  for (const answer of answers) {
    if (typeof answer.model !== 'string' || answer.model.trim() === '') continue;
    const label = answer.model.trim();
    const lab = typeof answer.lab === 'string' && answer.lab.trim() !== '' ? answer.lab.trim() : label;
    const group = byLab.get(lab) ?? { labels: new Set(), modelIds: new Set() };
    byLab.set(lab, group);
    group.labels.add(label);
    if (typeof answer.model_id === 'string' && answer.model_id.trim() !== '') {
      const modelId = answer.model_id.trim();
      const knownLab = labOfModel.get(modelId);
      if (knownLab !== undefined && knownLab !== lab) {
        throw new Error(`model_id "${modelId}" is answered under two labs ("${knownLab}" and "${lab}"); cannot derive one family`);
      }
      labOfModel.set(modelId, lab);
      group.modelIds.add(modelId);
    }
  }
  if (byLab.size === 0) throw new Error('no answers with a model label: cannot derive models.yaml');

  const families: ModelRegistry['families'] = [];
  const models: ModelRegistry['models'] = [];
  for (const [lab, group] of byLab) {
    const labels = [...group.labels].sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
    const name = labels[0] as string;
    const others = [...labels.slice(1), ...group.modelIds].map((alias) => alias.toLowerCase()).sort();
    const aliases = [...new Set([name.toLowerCase(), ...others])];
    families.push({ name, lab, aliases, fictional: false });
    for (const modelId of [...group.modelIds].sort()) models.push({ model_id: modelId, family: name, retired: false });
  }
  const names = families.map((family) => family.name);
  const clash = names.find((name, index) => names.indexOf(name) !== index);
  if (clash) throw new Error(`two labs share the family name "${clash}"`);

  const known = new Set(models.map((model) => model.model_id));
  for (const retirement of retirements) {
    const model = models.find((candidate) => candidate.model_id === retirement.model_id);
    if (!model) throw new Error(`--retire names "${retirement.model_id}", which no answer uses; known: ${[...known].join(', ')}`);
    if (retirement.superseded_by !== undefined) {
      if (!known.has(retirement.superseded_by)) {
        throw new Error(`--retire ${retirement.model_id}=${retirement.superseded_by}: "${retirement.superseded_by}" is not a model_id in the answers`);
      }
      if (retirement.superseded_by === retirement.model_id) throw new Error(`--retire ${retirement.model_id}: a version cannot supersede itself`);
      model.superseded_by = retirement.superseded_by;
    }
    model.retired = true;
  }
  families.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  models.sort((a, b) => (a.family === b.family ? (a.model_id < b.model_id ? -1 : 1) : a.family < b.family ? -1 : 1));
  return ModelRegistrySchema.parse({ families, models });
}

/** Parses `model_id=superseded_by` (or a bare `model_id`: retired, successor unknown). */
export function parseRetirement(value: string): Retirement {
  const [modelId = '', successor] = value.split('=', 2).map((part) => part.trim());
  if (modelId === '') throw new Error(`--retire "${value}" must be <model_id>=<superseded_by> or <model_id>`);
  return successor ? { model_id: modelId, superseded_by: successor } : { model_id: modelId };
}

/** The family a voice label names: the family itself, or one whose aliases include it. */
function familyOfLabel(label: string, registry: ModelRegistry): string | undefined {
  const lowered = label.toLowerCase();
  return registry.families.find((family) => family.name === label || family.aliases.includes(lowered))?.name;
}

/**
 * A tension that names a voice which did not answer (the data has "GPT-4o" where the
 * OpenAI answer came from "GPT", gpt-5.5) is pointed at the one answering voice of the same
 * family. With no such family, or several of its voices answering, nothing is changed and
 * validation rejects the record.
 */
export function resolveVoice(voice: unknown, answers: readonly SourceAnswer[], registry: ModelRegistry): Omit<Normalization, 'id' | 'field'> | undefined {
  if (typeof voice !== 'string' || answers.some((answer) => answer.model === voice)) return undefined;
  const family = familyOfLabel(voice, registry);
  if (!family) return undefined;
  const familyOf = new Map(registry.models.map((model) => [model.model_id, model.family]));
  const candidates = new Set(
    answers
      .filter((answer) => typeof answer.model_id === 'string' && familyOf.get(answer.model_id.trim()) === family)
      .map((answer) => answer.model)
      .filter((model): model is string => typeof model === 'string'),
  );
  const [only] = candidates;
  if (candidates.size !== 1 || only === undefined) return undefined;
  return { from: voice, to: only, reason: `"${voice}" did not answer this record; it names the ${family} family, whose only voice here is "${only}"` };
}

export function modelsYaml(registry: ModelRegistry): string {
  return [
    '# Derived by scripts/import-omnarai.ts from the answers in divergences.jsonl: one family per lab,',
    '# named after the shortest label used with it. The data says nothing about retirements: every',
    '# version is retired: false unless the import was run with --retire <model_id>=<superseded_by>.',
    stringifyYaml(registry),
  ].join('\n');
}
