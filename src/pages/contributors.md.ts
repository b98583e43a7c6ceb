/** /contributors.md: the Markdown twin of /contributors/: everyone credited on a corpus work. */
import { CONTRIBUTOR_TITLES, manifest, markdownResponse, mdText, plural, site, worksByContributor } from '../lib/artifacts.ts';

export function GET(): Response {
  const counts = manifest().counts.contributors;
  const people = [...worksByContributor().entries()].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0], 'en'));
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
    const more = items.length > CONTRIBUTOR_TITLES ? `, and ${(items.length - CONTRIBUTOR_TITLES).toLocaleString('en')} more (the corpus list: /works.md)` : '';
    lines.push(
      `- ${mdText(name)} (${plural(items.length, 'work')}): ${items
        .slice(0, CONTRIBUTOR_TITLES)
        .map((item) => `[${mdText(item.title)}](${item.markdown_url})`)
        .join(', ')}${more}`,
    );
  }
  return markdownResponse(lines.join('\n'));
}
