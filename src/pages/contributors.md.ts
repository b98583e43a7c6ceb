/** /contributors.md: the Markdown twin of /contributors/: everyone credited on a corpus work. */
import { manifest, markdownResponse, mdText, plural, site, works } from '../lib/artifacts.ts';

export function GET(): Response {
  const counts = manifest().counts.contributors;
  const byName = new Map<string, { id: string; title: string; markdown_url: string }[]>();
  for (const work of works()) {
    for (const name of new Set(work.contributors)) byName.set(name, [...(byName.get(name) ?? []), work]);
  }
  const people = [...byName.entries()].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0], 'en'));
  const lines = [
    `# ${site().name}: Contributors`,
    '',
    `> Everyone credited on a corpus work: ${plural(counts.corpus, 'corpus contributor')}; the Atlas adds ${plural(counts.atlas_voices, 'model voice')} (${counts.total} in all; counts from /api/manifest).`,
    '',
    '- JSON: [/api/info](/api/info)',
    '- For people: [/contributors/](/contributors/)',
    '',
    '## Contributors',
    '',
  ];
  for (const [name, items] of people) {
    lines.push(`- ${mdText(name)} (${plural(items.length, 'work')}): ${items.map((item) => `[${mdText(item.title)}](${item.markdown_url})`).join(', ')}`);
  }
  return markdownResponse(lines.join('\n'));
}
