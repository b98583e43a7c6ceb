/**
 * The build: content/ → artifacts/. Validates, derives records, renders markdown, hashes,
 * embeds (cached by content hash) and writes the static indices the API and site read.
 * Writes into a fresh folder and swaps it in, so a reader never sees half a build.
 */
import type { AudioManifest } from '../core/artifacts.ts';
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createUseLiteEmbedder, type Embedder } from '../providers/embedder.ts';
import { sha256Hex } from '../core/manifest.ts';
import {
  deriveConceptGraph,
  deriveDivergence,
  deriveWork,
  toSummary,
  type DivergenceFull,
  type WorkRecord,
} from '../core/records.ts';
import { buildManifest } from '../core/build-manifest.ts';
import { conceptLineage } from '../core/lineage.ts';
import { recordConcepts, trackTensions } from '../core/tension-identity.ts';
import { renderLineageMarkdown } from '../core/lineage-markdown.ts';
import { plainText } from '../core/excerpt.ts';
import { buildFullTextIndex, encodeFullText, type FullTextData } from '../core/search/fulltext.ts';
import type { SearchChunk, SearchMeta, SearchRecord } from '../core/search/types.ts';
import { artifactPaths } from '../core/artifacts.ts';
import { chunkText } from './lib/chunk.ts';
import { createEmbeddingCache } from './lib/embedding-cache.ts';
import { ContentError } from '../content-files/issues.ts';
import { loadContent, type LoadedContent } from '../content-files/load-content.ts';
import { pathsFromEnv, type BuildPaths } from '../core/paths.ts';
import { renderMarkdown } from './lib/render.ts';
import { writeFile, writeJson } from '../content-files/write.ts';
import { renderLlmsTxt } from './lib/llms-txt.ts';
import { exitWhenFlushed } from './lib/cli-exit.ts';
import { publishEvidence, writtenResult } from './lib/certify/published-evidence.ts';
import { attachLongitudinal } from './lib/longitudinal.ts';

export interface BuildOptions extends BuildPaths {
  embedder?: Embedder;
  log?: (line: string) => void;
  now?: () => Date;
}

export interface BuildResult {
  works: number;
  divergences: number;
  chunks: number;
  embedded: number;
  cachedEmbeddings: number;
  /** Answers of re-elicitation pairs newly embedded for their longitudinal summary (not from the cache). */
  answersEmbedded: number;
  milliseconds: number;
}

export async function buildArtifacts(options: BuildOptions): Promise<BuildResult> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const now = options.now ?? (() => new Date());
  const content = loadContent(options.contentDir);
  log(`validated ${content.files.length} content files in ${options.contentDir}`);

  const staging = `${options.artifactsDir}.staging-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const out = artifactPaths(staging);

  const works = [
    ...content.works.map((entry) => deriveWork(entry.data, entry.body, 'seed')),
    ...content.proposals.map((entry) => deriveWork(entry.data, entry.body, 'proposal')),
  ].sort(byId);
  const reElicitedBy = new Map<string, string[]>();
  for (const entry of content.divergences) {
    if (entry.data.re_elicits) {
      reElicitedBy.set(entry.data.re_elicits, [...(reElicitedBy.get(entry.data.re_elicits) ?? []), entry.data.id]);
    }
  }
  const divergences = content.divergences
    .map((entry) =>
      deriveDivergence(entry.data, entry.body, content.registry, reElicitedBy.get(entry.data.id) ?? [], writtenResult(content.dir, entry.data)),
    )
    .sort(byDateThenId);
  const tensions = divergences.flatMap((record) => record.tensions);
  const graph = deriveConceptGraph(content.concepts.map((entry) => entry.data), works);
  const dispositions = Object.fromEntries(content.tensions.map((entry) => [entry.data.key, entry.data.dispositions]));

  const embedder = options.embedder ?? (await createUseLiteEmbedder());
  const answersEmbedded = await attachLongitudinal(divergences, createEmbeddingCache(options.cacheDir, embedder), embedder.id, content.dir);

  writeJson(out.works, works);
  writeJson(out.divergences, divergences);
  writeJson(out.tensions, tensions);
  writeJson(out.dispositions, dispositions);
  writeJson(out.concepts, graph);
  writeJson(out.models, content.registry);
  writeJson(out.site, content.site);
  writeJson(out.claims, content.claims);

  await writeRecordTwins(content, works, divergences, out.public);
  const conceptIds = new Set(graph.nodes.map((node) => node.id));
  const byRecord = new Map(divergences.map((record) => [record.id, recordConcepts(record, conceptIds)]));
  const tracked = trackTensions(tensions, dispositions, (id) => byRecord.get(id) ?? []);
  await writeConcepts(content, graph, out.public, { graph, works, divergences, tensions: tracked });
  const audio = writeAudio(content, out.public);
  writeJson(out.audio, audio);
  await writePages(content, out);

  const search = await buildSearch(content, works, divergences, { ...options, embedder }, log);
  writeJson(out.searchMeta, search.meta);
  writeFile(out.searchVectors, new Uint8Array(search.vectors.buffer, search.vectors.byteOffset, search.vectors.byteLength));
  writeFile(out.searchFullText, encodeFullText(search.fullText));

  const manifest = buildManifest({
    works,
    divergences,
    graph,
    audioTracks: audio.tracks.length,
    registry: content.registry,
    seedFiles: content.files.filter((file) => file.file.startsWith('works/')),
    corpusRev: sha256Hex(Buffer.concat(content.files.flatMap((file) => [Buffer.from(`${file.file}\n`), file.bytes]))).slice(0, 16),
    generatedAt: now().toISOString(),
  });
  writeJson(out.manifest, manifest);
  writeFile(path.join(out.public, 'llms.txt'), renderLlmsTxt(content, manifest));
  writeJson(out.buildInfo, {
    built_at: now().toISOString(),
    content_dir: content.dir,
    corpus_rev: manifest.published_releases.corpus_rev,
  });

  rmSync(options.artifactsDir, { recursive: true, force: true });
  mkdirSync(path.dirname(options.artifactsDir), { recursive: true });
  renameSync(staging, options.artifactsDir);
  const result: BuildResult = {
    works: works.length,
    divergences: divergences.length,
    chunks: search.meta.chunk_records.length,
    embedded: search.embedded,
    cachedEmbeddings: search.cached,
    answersEmbedded,
    milliseconds: Date.now() - started,
  };
  log(
    `built ${result.works} works, ${result.divergences} Atlas records, ${result.chunks} passages ` +
      `(${result.embedded} embedded, ${result.cachedEmbeddings} from cache) in ${result.milliseconds} ms`,
  );
  return result;
}

function byId(a: { id: string }, b: { id: string }): number {
  return a.id.localeCompare(b.id, 'en', { numeric: true });
}

function byDateThenId(a: DivergenceFull, b: DivergenceFull): number {
  return b.date.localeCompare(a.date) || byId(a, b);
}

async function writeRecordTwins(
  content: LoadedContent,
  works: readonly WorkRecord[],
  divergences: readonly DivergenceFull[],
  publicDir: string,
): Promise<void> {
  const bodies = new Map([...content.works, ...content.proposals].map((entry) => [entry.data.id, entry]));
  for (const work of works) {
    const entry = bodies.get(work.id)!;
    writeFile(path.join(publicDir, 'records', `${work.id}.md`), entry.raw);
    writeJson(path.join(publicDir, 'records', `${work.id}.json`), {
      ...work,
      text: entry.body,
      html: await renderMarkdown(entry.body),
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
}

/** Where an approved import keeps its origin's record twin (docs/FEDERATION.md). */
export function originCopy(contentDir: string, id: string): string {
  const file = path.join(contentDir, 'federation', `${id}.md`);
  if (!existsSync(file)) throw new Error(`content/divergences/${id}.md is an import but content/federation/${id}.md, its origin copy, is missing`);
  return file;
}

async function writeConcepts(
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

function writeAudio(content: LoadedContent, publicDir: string): AudioManifest {
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

async function writePages(content: LoadedContent, out: ReturnType<typeof artifactPaths>): Promise<void> {
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

interface SearchBuild {
  meta: SearchMeta;
  vectors: Float32Array;
  fullText: FullTextData;
  embedded: number;
  cached: number;
}

async function buildSearch(
  content: LoadedContent,
  works: readonly WorkRecord[],
  divergences: readonly DivergenceFull[],
  options: BuildOptions,
  log: (line: string) => void,
): Promise<SearchBuild> {
  const bodies = new Map([...content.works, ...content.proposals].map((entry) => [entry.data.id, entry.body]));
  const records: SearchRecord[] = [];
  const chunks: SearchChunk[] = [];
  for (const work of works) {
    const index = records.push({
      id: work.id,
      kind: 'work',
      title: work.title,
      ring: work.ring,
      type: work.type,
      layer: work.layer,
      evidence: work.evidence,
      contributors: work.contributors,
      date: work.date,
      excerpt: work.excerpt,
      lineage: work.lineage,
    }) - 1;
    for (const passage of chunkText(plainText(bodies.get(work.id) ?? ''))) {
      chunks.push({ record: index, text: `${work.title}. ${passage}` });
    }
  }
  for (const record of divergences) {
    const index = records.push({
      id: record.id,
      kind: 'divergence',
      title: record.title,
      ring: 'core',
      type: 'divergence',
      layer: 'divergence',
      evidence: 'empirical',
      contributors: record.contributors,
      date: record.date,
      excerpt: record.excerpt,
      lineage: [],
    }) - 1;
    chunks.push({ record: index, text: record.question });
    const topics = record.tensions.map((tension) => `${tension.topic}: ${tension.claim_a} / ${tension.claim_b}`);
    if (topics.length > 0) chunks.push({ record: index, text: `${record.question} ${topics.join(' ')}` });
  }

  const embedder = options.embedder ?? (await createUseLiteEmbedder());
  const cache = createEmbeddingCache(options.cacheDir, embedder);
  let lastReport = 0;
  const result = await cache.embedAll(
    chunks.map((chunk) => chunk.text),
    (done, total) => {
      if (Date.now() - lastReport > 2000 || done === total) {
        lastReport = Date.now();
        log(`embedding passages: ${done}/${total}`);
      }
    },
  );
  const vectors = new Float32Array(chunks.length * embedder.dims);
  result.vectors.forEach((vector, index) => vectors.set(vector, index * embedder.dims));
  log(`indexing ${chunks.length} passages for full-text search`);
  const fullText = await buildFullTextIndex(records, chunks);
  return {
    meta: {
      embedder: { id: embedder.id, dims: embedder.dims },
      records,
      chunk_records: chunks.map((chunk) => chunk.record),
      built_at: (options.now ?? (() => new Date()))().toISOString(),
    },
    vectors,
    fullText,
    embedded: result.embedded,
    cached: result.cached,
  };
}

async function main(): Promise<void> {
  const paths = pathsFromEnv();
  try {
    await buildArtifacts({ ...paths, log: (line) => console.log(`[build] ${line}`) });
  } catch (error) {
    if (error instanceof ContentError) {
      console.error(`[build] ${error.message}`);
      // Every problem is listed, which can be long: exit only once stderr has drained.
      await exitWhenFlushed(1);
    }
    throw error;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  void main();
}
