/** /listen.md: the Markdown twin of the audio page (/listen/): tracks, audio files and transcripts. */
import { audio, formatDuration, manifest, markdownResponse, mdText, plural, publicBytes, site } from '../lib/artifacts.ts';
import { trackSeconds } from '../lib/wav-duration.ts';

export function GET(): Response {
  const archive = audio();
  const lines = [
    `# ${site().name}: Listen`,
    '',
    `> The audio archive: ${plural(manifest().counts.audio.tracks, 'track')} (count from /api/manifest). Transcripts are drafts.`,
    '',
    '- JSON: [/audio/manifest.json](/audio/manifest.json)',
    '- For people: [/listen/](/listen/)',
    '- Play counts: GET /api/play (POST /api/play {"slug"} records one play)',
    '',
    '## Tracks',
    '',
  ];
  for (const track of archive.tracks) {
    lines.push(
      `- ${mdText(track.title)} (${track.slug}): ${formatDuration(trackSeconds(track, publicBytes))}, ${track.date}, ${track.contributors.join(', ')}. Transcript: [${track.transcript_url}](${track.transcript_url})${track.stream_url ? `. Audio: [${track.stream_url}](${track.stream_url})` : '. No audio file on this deployment'}.${track.description ? ` ${mdText(track.description)}` : ''}`,
    );
  }
  return markdownResponse(lines.join('\n'));
}
