/** /graph.md: the Markdown twin of the concept page (/graph/): every concept and its links. */
import { conceptGraph, manifest, markdownResponse, mdText, plural, site } from '../lib/artifacts.ts';

export function GET(): Response {
  const graph = conceptGraph();
  const counts = manifest().counts.concept_graph;
  const labels = new Map(graph.nodes.map((node) => [node.id, node.label]));
  const neighbours = new Map<string, Set<string>>();
  for (const [a, b] of graph.edges) {
    neighbours.set(a, (neighbours.get(a) ?? new Set()).add(b));
    neighbours.set(b, (neighbours.get(b) ?? new Set()).add(a));
  }
  const lines = [
    `# ${site().name}: Concepts`,
    '',
    `> Themes and glossary terms the works belong to, and how they relate: ${plural(counts.nodes, 'concept')} (${counts.themes} themes, ${counts.glossary} glossary terms) and ${plural(counts.edges, 'link')}; counts from /api/manifest.`,
    '',
    '- JSON: [/concepts.json](/concepts.json)',
    '- For people: [/graph/](/graph/)',
    '',
    '## Concepts',
    '',
  ];
  for (const node of [...graph.nodes].sort((a, b) => a.label.localeCompare(b.label, 'en'))) {
    const related = [...(neighbours.get(node.id) ?? [])].filter((id) => labels.has(id)).sort();
    lines.push(
      `- [${mdText(node.label)}](/concepts/${node.id}.md): ${node.type}, ring ${node.ring}, weight ${node.weight}${node.definition ? `. ${mdText(node.definition)}` : ''}${related.length > 0 ? ` Related: ${related.map((id) => labels.get(id)).join(', ')}.` : ''}`,
    );
  }
  return markdownResponse(lines.join('\n'));
}
