/** The build's public files (artifacts/public/): record twins, concept cards with their lineage, audio, pages. */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { AudioManifest, artifactPaths } from '../../core/artifacts.ts';
import { plainText } from '../../core/excerpt.ts';
import { conceptLineage } from '../../core/lineage.ts';
import { renderLineageMarkdown } from '../../core/lineage-markdown.ts';
import { toSummary, type deriveConceptGraph, type DivergenceFull, type WorkRecord } from '../../core/records.ts';
import { recordHistory, recordKey, recordRevisions } from '../../core/record-history.ts';
import type { ChangeHistory } from '../../schemas/api/changes.ts';
import type { LoadedContent } from '../../content-files/load-content.ts';
import { writeFile, writeJson } from '../../content-files/write.ts';
import { CALIBRATION_FILE } from '../../schemas/certification.ts';
import { publishEvidence } from './certify/published-evidence.ts';
import { renderMarkdown } from './render.ts';
import { reuseTwins, twinKey, type TwinReuse } from './twin-reuse.ts';

export async function writeRecordTwins(
  content: LoadedContent,
  works: readonly WorkRecord[],
  divergences: readonly DivergenceFull[],
  publicDir: string,
  reuse?: TwinReuse,
  changes?: ChangeHistory,
): Promise<{ keys: Map<string, string>; reused: number }> {
  const bodies = new Map([...content.works, ...content.proposals].map((entry) => [entry.data.id, entry]));
  // Each twin carries its record's revisions (docs/CHANGES.md); without a history given, history unavailable.
  const history = changes ?? { history: 'unavailable' as const, reason: 'no change history was given to the build', revisions: [] };
  const revisions = recordRevisions(history, ['work', 'divergence']);
  const historyOf = (kind: 'work' | 'divergence', id: string) => recordHistory(history, revisions.get(recordKey(kind, id)));
  const keys = new Map<string, string>();
  let reused = 0;
  mkdirSync(path.join(publicDir, 'records'), { recursive: true });
  for (const work of works) {
    const entry = bodies.get(work.id)!;
    const workHistory = historyOf('work', work.id);
    const raw = entry.raw; // read from the file's bytes at each ask (lazy-text.ts)
    const key = twinKey(work, raw, workHistory);
    keys.set(work.id, key);
    if (reuseTwins(reuse, work.id, key, publicDir)) {
      reused++;
      continue;
    }
    writeFile(path.join(publicDir, 'records', `${work.id}.md`), raw);
    const body = entry.body;
    writeJson(path.join(publicDir, 'records', `${work.id}.json`), {
      ...work,
      text: body,
      html: await renderMarkdown(body),
      history: workHistory,
    });
  }
  const raw = new Map(content.divergences.map((entry) => [entry.data.id, entry.raw]));
  for (const record of divergences) {
    writeFile(path.join(publicDir, 'records', `${record.id}.md`), raw.get(record.id)!);
    // An import also serves its origin's bytes, verbatim, so anyone can check the origin's signature.
    if (record.provenance?.federation) copyFileSync(originCopy(content.dir, record.id), path.join(publicDir, 'records', `${record.id}.origin.md`));
    writeJson(path.join(publicDir, 'records', `${record.id}.json`), {
      ...record,
      ...(record.synthesis ? { synthesis_html: await renderMarkdown(record.synthesis) } : {}),
      history: historyOf('divergence', record.id),
    });
  }
  publishEvidence(content.dir, content.divergences, publicDir);
  // One static index for agents that read files rather than the API. People's pages
  // (/works/, /atlas/) are Astro's, so agent files stay under /records/.
  writeJson(path.join(publicDir, 'records.json'), {
    works,
    divergences: divergences.map(toSummary),
    note: 'Each record is also at /records/<id>.json and, as its source markdown, /records/<id>.md. Counts: /api/manifest.',
  });
  return { keys, reused };
}

/**
 * Serves the Atlas's certification calibration (content/certification-calibration.json, written by
 * `npm run certify -- --calibrate`) byte for byte at /certification-calibration.json, so anyone
 * can check the figures the pages quote. Returns whether there was one.
 */
export function writeCalibration(content: LoadedContent, publicDir: string): boolean {
  if (!content.calibration) return false;
  mkdirSync(publicDir, { recursive: true });
  copyFileSync(path.join(content.dir, CALIBRATION_FILE), path.join(publicDir, CALIBRATION_FILE));
  return true;
}

/** Where an approved import keeps its origin's record twin (docs/FEDERATION.md). */
export function originCopy(contentDir: string, id: string): string {
  const file = path.join(contentDir, 'federation', `${id}.md`);
  if (!existsSync(file)) throw new Error(`content/divergences/${id}.md is an import but content/federation/${id}.md, its origin copy, is missing`);
  return file;
}

export async function writeConcepts(
  content: LoadedContent,
  graph: ReturnType<typeof deriveConceptGraph>,
  publicDir: string,
  lineageInput: Parameters<typeof conceptLineage>[0],
): Promise<void> {
  const cards = [];
  for (const entry of content.concepts) {
    const node = graph.nodes.find((candidate) => candidate.id === entry.data.id)!;
    // The same view as GET /api/lineage?concept=<id>, so a file reader and an API caller agree.
    const lineage = conceptLineage(lineageInput, node);
    const card = {
      ...node,
      related: entry.data.related,
      body: entry.body,
      html: await renderMarkdown(entry.body),
      markdown_url: `/concepts/${node.id}.md`,
      json_url: `/concepts/${node.id}.json`,
      lineage,
    };
    cards.push(card);
    writeFile(path.join(publicDir, 'concepts', `${node.id}.md`), `${entry.raw.replace(/\n*$/, '\n')}\n${renderLineageMarkdown(lineage)}`);
    writeJson(path.join(publicDir, 'concepts', `${node.id}.json`), card);
  }
  writeJson(path.join(publicDir, 'concepts.json'), {
    schema: {
      id: 'string (slug)',
      label: 'string',
      ring: 'core | curated | open | media',
      type: 'theme | glossary',
      weight: 'integer',
      definition: 'string, optional',
      category: 'string, optional',
      related: 'array of concept ids',
    },
    nodes: graph.nodes.map((node) => ({ ...node, href: `/concepts/${node.id}.json` })),
    edges: graph.edges,
  });
}

export function writeAudio(content: LoadedContent, publicDir: string): AudioManifest {
  const tracks = content.audio.map((entry) => {
    const stream = entry.data.stream_url;
    let streamUrl: string | null = null;
    if (entry.audioFile) {
      const target = path.join(publicDir, 'audio', path.basename(entry.audioFile));
      mkdirSync(path.dirname(target), { recursive: true });
      copyFileSync(path.join(content.dir, entry.audioFile), target);
      streamUrl = `/audio/${path.basename(entry.audioFile)}`;
    } else if (stream) {
      streamUrl = stream;
    }
    writeFile(path.join(publicDir, 'audio', `${entry.data.slug}.txt`), `${plainText(entry.body)}\n`);
    return {
      slug: entry.data.slug,
      title: entry.data.title,
      duration_seconds: entry.data.duration_seconds,
      date: entry.data.date,
      contributors: entry.data.contributors,
      ...(entry.data.description ? { description: entry.data.description } : {}),
      stream_url: streamUrl,
      transcript_url: `/audio/${entry.data.slug}.txt`,
    };
  });
  const manifest: AudioManifest = {
    tracks,
    total_duration_seconds: tracks.reduce((sum, track) => sum + track.duration_seconds, 0),
    note: 'Transcripts are drafts. stream_url is null when a track has no audio file in this deployment.',
  };
  writeJson(path.join(publicDir, 'audio', 'manifest.json'), manifest);
  return manifest;
}

export async function writePages(content: LoadedContent, out: ReturnType<typeof artifactPaths>): Promise<void> {
  const publicPath: Record<string, string> = {
    limitations: 'limitations.md',
    'evidence-status': 'evidence-status.md',
    'for-future-models': 'inheritance/for-future-models.md',
    context: `${content.site.slug}.context.md`,
  };
  const pages: Record<string, { title: string; description: string; path: string; html: string }> = {};
  for (const [name, entry] of Object.entries(content.pages)) {
    const target = publicPath[name]!;
    // The markdown twin opens with the page title unless the body already does.
    const heading = /^#\s/.test(entry.body.trimStart()) ? '' : `# ${entry.data.title}\n\n`;
    writeFile(path.join(out.public, target), `${heading}${entry.body}`);
    pages[name] = { title: entry.data.title, description: entry.data.description, path: `/${target}`, html: await renderMarkdown(entry.body) };
  }
  writeJson(out.pages, pages);
  writeJson(path.join(out.public, 'claims.json'), {
    claims: content.claims,
    note: 'Measured and provisional claims of this deployment, with their evidence. Counts live only in /api/manifest.',
  });
}
