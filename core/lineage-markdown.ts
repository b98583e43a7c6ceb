/** The lineage view as markdown: the section appended to /concepts/<id>.md. Same data as the JSON. */
import type { Lineage, TensionBrief } from './lineage.ts';

function cell(value: string): string {
  return value.replace(/\|/g, '\\|').replace(/\s+/g, ' ');
}

function tensionLine(tension: TensionBrief): string {
  const disposition = tension.disposition ? `, ${tension.disposition}` : '';
  return `- ${tension.topic} — ${tension.voices.join(' / ')} (${tension.status}${disposition}; seen ${tension.sighting_count}× in ${tension.record_ids.join(', ')}) \`${tension.id}\``;
}

export function renderLineageMarkdown(lineage: Lineage): string {
  const { counts } = lineage;
  const lines = [
    '## Lineage',
    '',
    `${counts.works} works and ${counts.divergences} Atlas records carry this concept; ${counts.contributors} contributors; ` +
      `${counts.tensions_open} open and ${counts.tensions_repaired} repaired tensions. ${lineage.note}`,
    '',
    '### Related concepts (co-occurrence on the same works)',
    '',
    ...(lineage.related.length > 0 ? lineage.related.map((entry) => `- ${entry.label} (\`${entry.id}\`): ${entry.co_occurrences}`) : ['None.']),
    '',
    '### Spine (oldest first)',
    '',
    ...(lineage.spine.length > 0
      ? [
          '| date | id | kind | title | contributors | ring |',
          '| --- | --- | --- | --- | --- | --- |',
          ...lineage.spine.map(
            (entry) => `| ${entry.date} | ${entry.id} | ${entry.kind} | ${cell(entry.title)} | ${cell(entry.contributors.join(', '))} | ${entry.ring} |`,
          ),
        ]
      : ['None.']),
    '',
    '### Contributors',
    '',
    ...(lineage.contributors.length > 0
      ? lineage.contributors.map((entry) => `- ${entry.name}: ${entry.works} works, ${entry.divergences} Atlas records`)
      : ['None.']),
    '',
    '### Tensions',
    '',
    `Open (${lineage.tensions.open.length}):`,
    '',
    ...(lineage.tensions.open.length > 0 ? lineage.tensions.open.map(tensionLine) : ['None.']),
    '',
    `Repaired (${lineage.tensions.repaired.length}):`,
    '',
    ...(lineage.tensions.repaired.length > 0 ? lineage.tensions.repaired.map(tensionLine) : ['None.']),
    '',
  ];
  return lines.join('\n');
}
