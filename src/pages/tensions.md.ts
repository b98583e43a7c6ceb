/** /tensions.md: the Markdown twin of the tensions pages, from the same artifacts. */
import { markdownResponse, mdText, plural, site } from '../lib/artifacts.ts';
import { DISPOSITION_LABEL, dispositionText, LIFECYCLE_MEANING, LIFECYCLES, tensionApiPath, tensionPath, trackedTensions } from '../lib/tensions.ts';

export function GET(): Response {
  const all = trackedTensions();
  const lines = [
    `# ${site().name}: Tensions`,
    '',
    `> Every named disagreement between two voices, once (${plural(all.length, 'tension')}), keyed <voice>__<voice>__<topic>, with its Atlas sightings and the curators' dispositions. Model answers are perspectives, not truth.`,
    '',
    `- JSON: [${tensionApiPath()}](${tensionApiPath()}) (one tension: \`/api/tensions?key=<key>\`)`,
    '- For people: [/tensions/](/tensions/)',
    '',
  ];
  for (const stage of LIFECYCLES) {
    const group = all.filter((tension) => tension.lifecycle === stage);
    lines.push(`## ${stage === 'open' ? 'Open' : 'Repaired'} (${group.length})`, '', LIFECYCLE_MEANING[stage], '');
    for (const tension of group) {
      const latest = tension.dispositions.at(-1);
      lines.push(
        `### ${mdText(tension.topic)}`,
        '',
        `- Key: \`${tension.id}\` ([page](${tensionPath(tension.id)}), [JSON](${tensionApiPath({ key: tension.id })}))`,
        `- ${mdText(tension.voice_a)}: ${mdText(tension.claim_a)}`,
        `- ${mdText(tension.voice_b)}: ${mdText(tension.claim_b)}`,
        `- Status ${tension.status}; seen in ${plural(tension.sighting_count, 'record')}: ${tension.sightings.map((sighting) => sighting.record_id ?? sighting.tension_id).join(', ')}`,
        latest
          ? `- Latest disposition: ${DISPOSITION_LABEL[latest.kind]} by ${mdText(latest.by)}, ${latest.at}: ${mdText(dispositionText(latest, { a: tension.voice_a, b: tension.voice_b }))}`
          : '- No curator disposition yet.',
        '',
      );
    }
  }
  return markdownResponse(lines.join('\n'));
}
