/**
 * Additions to models.yaml made by a curator's approval: new families and versions are
 * appended in place (comments, order and every other line kept), and fictional content stays
 * fictional — a family the content does not know is never added to it as a real one.
 */
import type { ModelRegistry, SiteConfig } from '../schemas/content.ts';
import { appendToSequence } from './yaml-edit.ts';

type Family = ModelRegistry['families'][number];
type Version = ModelRegistry['models'][number];

export interface RegistryAdditions {
  families: Family[];
  models: Version[];
}

/**
 * Content declares its voices fictional when site.yaml says it is demonstration content
 * (`demo: true`) or when models.yaml marks every family `fictional: true`.
 */
export function declaresFictionalVoices(site: Pick<SiteConfig, 'demo'>, registry: ModelRegistry): boolean {
  return site.demo === true || (registry.families.length > 0 && registry.families.every((family) => family.fictional));
}

/**
 * Whether the families in `names`, new to the registry, are written fictional. In fictional
 * content they must be: without the curator's `--fictional` the approval is refused with
 * `advice` (what else the curator can do), and nothing is written.
 */
export function newFamiliesAreFictional(
  site: Pick<SiteConfig, 'demo'>,
  registry: ModelRegistry,
  names: readonly string[],
  fictional: boolean | undefined,
  advice: string,
): boolean {
  if (fictional === true) return true;
  if (names.length === 0 || !declaresFictionalVoices(site, registry)) return false;
  const declared = site.demo ? 'site.yaml says demo: true' : 'models.yaml marks every family fictional: true';
  const quoted = names.map((name) => `"${name}"`).join(', ');
  throw new Error(
    `this content declares its model voices fictional (${declared}), and ${quoted} ${names.length === 1 ? 'is not a family' : 'are not families'} of its models.yaml, ` +
      `so approving would add ${names.length === 1 ? 'a family' : 'families'} not known to be fictional; nothing was written. ` +
      `${advice} (its families: ${registry.families.map((family) => family.name).join(', ')}), or pass --fictional to add ${names.length === 1 ? 'it as a fictional family' : 'them as fictional families'}.`,
  );
}

/** models.yaml's text with the additions appended to `families` and `models`. */
export function appendToRegistry(source: string, additions: RegistryAdditions): string {
  let next = source;
  for (const family of additions.families) next = appendToSequence(next, ['families'], family);
  for (const model of additions.models) next = appendToSequence(next, ['models'], model);
  return next;
}
