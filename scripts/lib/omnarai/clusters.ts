/**
 * Atlas clusters → concepts (issue 29 item 5). Lineage reads an Atlas record's `cluster` as a
 * concept id; the source's records carry the original service's clusters, which are not
 * concept ids, so without this every concept showed 0 Atlas records. A cluster that names a
 * concept (its id, or its label spelled as a slug: case, spacing, punctuation and "&" = "and"
 * ignored) is written as that concept's id; any other becomes a concept of its own, a theme
 * whose category says it is an Atlas cluster (the contract's concept types are theme and
 * glossary), weighted by its records. Nothing is guessed from partial word overlap.
 */
import { ConceptSchema, type ConceptFrontmatter } from '../../../schemas/content.ts';
import { stringifyMarkdown } from '../../../content-files/frontmatter.ts';
import type { Build } from './records.ts';
import type { ClusterReport } from './report.ts';

/** The category of a concept registered from an Atlas cluster. */
export const CLUSTER_CATEGORY = 'Atlas cluster';

export function slugOf(value: string): string {
  return value
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

function labelOf(slug: string): string {
  const words = slug.split('-').filter((word) => word !== '');
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Resolves every cluster of the records (before they are written) and registers the missing concepts. */
export function addClusterConcepts(records: readonly Record<string, unknown>[], build: Build): ClusterReport {
  const counts = new Map<string, number>();
  for (const record of records) {
    if (typeof record.cluster === 'string' && record.cluster.trim() !== '') counts.set(record.cluster, (counts.get(record.cluster) ?? 0) + 1);
  }
  const bySlug = new Map<string, string>();
  for (const concept of build.concepts.values()) {
    bySlug.set(concept.id, concept.id);
    if (!bySlug.has(slugOf(concept.label))) bySlug.set(slugOf(concept.label), concept.id);
  }
  const report: ClusterReport = { mapped: {}, registered: [] };
  for (const [cluster, size] of [...counts].sort((a, b) => a[0].localeCompare(b[0]))) {
    const slug = slugOf(cluster);
    const existing = build.concepts.has(cluster) ? cluster : bySlug.get(slug);
    if (existing) {
      build.clusters.set(cluster, existing);
      if (existing !== cluster) report.mapped[cluster] = existing;
      continue;
    }
    const parsed = ConceptSchema.safeParse({
      id: slug,
      label: labelOf(slug),
      ring: 'core',
      type: 'theme',
      weight: size,
      category: CLUSTER_CATEGORY,
      definition: `The Atlas records the source filed under its cluster "${cluster}" (${size} ${size === 1 ? 'record' : 'records'}).`,
      related: [],
    });
    if (!parsed.success || slug === '') {
      build.warnings.push(`divergences: cluster "${cluster}" is not usable as a concept id; its records keep it as written and show on no concept`);
      continue;
    }
    const concept: ConceptFrontmatter = parsed.data;
    build.concepts.set(concept.id, concept);
    build.files.set(`concepts/${concept.id}.md`, stringifyMarkdown(concept, concept.definition ?? concept.label));
    build.clusters.set(cluster, concept.id);
    report.registered.push(concept.id);
  }
  return report;
}
