/** /atlas.md: the Markdown twin of the Atlas list (/atlas/), from the same artifacts. */
import { describeTierSource } from '../../core/certify/tier-source.ts';
import { divergences, manifest, markdownResponse, mdText, plural, site, TIER_MEANING } from '../lib/artifacts.ts';

export function GET(): Response {
  const counts = manifest().counts.atlas;
  const lines = [
    `# ${site().name}: Divergence Atlas`,
    '',
    `> Open questions put verbatim to several models, their answers kept side by side, and the points where they split named as tensions. ${plural(counts.live_records, 'record')} (${plural(counts.distinct_questions, 'distinct question')}, ${plural(counts.delta_records, 're-elicitation')}), ${plural(counts.verbatim_answers, 'verbatim answer')}, ${plural(counts.tension_axes, 'named tension')}; counts from /api/manifest.`,
    '',
    'Model answers are perspectives, not truth. Only tier C3 earns unqualified "genuine divergence" language; a stale record is a witness of what a retired model version said on its date.',
    '',
    '- JSON: [/api/divergences](/api/divergences) (one record: `/api/divergences?id=<id>`)',
    '- For people: [/atlas/](/atlas/)',
    '',
    '## Tiers',
    '',
    ...Object.entries(TIER_MEANING).map(([tier, meaning]) => `- ${tier}: ${meaning}`),
    '',
    '## Records',
    '',
  ];
  for (const record of divergences()) {
    const flags = [
      `tier ${record.certification.tier} (${describeTierSource(record.certification.tier_source)})`,
      record.freshness.stale ? `stale (${record.freshness.stale_models.map((model) => model.model_id).join(', ')} retired)` : 'current models',
      record.re_elicits ? `re-elicits ${record.re_elicits}` : undefined,
      record.re_elicited_by.length > 0 ? `re-elicited by ${record.re_elicited_by.join(', ')}` : undefined,
      record.annotated ? 'annotated' : undefined,
    ].filter(Boolean);
    lines.push(
      `- [${mdText(record.question)}](${record.markdown_url}): ${record.id}, ${record.date}; ${flags.join('; ')}; voices ${record.contributors.join(', ')}; ${plural(record.answerCount, 'answer')}, ${plural(record.tensionCount, 'tension')}. JSON: ${record.json_url}`,
    );
  }
  return markdownResponse(lines.join('\n'));
}
