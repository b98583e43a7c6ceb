/**
 * Read-only access to the JSON artifacts written by scripts/build.ts, for the static site.
 * Reads from process.env.ARTIFACTS_DIR, else ./artifacts (relative to where `astro build`
 * runs). Every file is read once per build. Counts shown to people come from the manifest
 * only (spec §1 trust rule 4); per-record numbers come from the record itself.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ConceptGraph, DivergenceFull, WorkRecord } from '../../core/records.ts';
import type { Manifest } from '../../core/build-manifest.ts';
import type { Lineage } from '../../core/lineage.ts';

export type { ConceptGraph, ConceptNode, DivergenceFull, TensionEntry, WorkRecord } from '../../core/records.ts';
export type { Manifest } from '../../core/build-manifest.ts';
// One definition of each artifact shape: the writer's (the build) and the schema's.
import type { SiteConfig } from '../../schemas/content.ts';
import type { RecordHistory } from '../../schemas/api/record-history.ts';
import type { AudioManifest } from '../../core/artifacts.ts';
export type { SiteConfig } from '../../schemas/content.ts';
export type { AudioManifest } from '../../core/artifacts.ts';
export type AudioTrack = AudioManifest['tracks'][number];

export interface StaticPage {
  title: string;
  description: string;
  /** Public path of the markdown twin, e.g. /limitations.md */
  path: string;
  html: string;
}

/** A work as written to public/records/<id>.json: the record plus its text and rendered html. */
export interface WorkTwin extends WorkRecord {
  text: string;
  html: string;
  /** Its revisions from the content's history (absent from artifacts built before the build read it). */
  history?: RecordHistory;
}

/** A divergence record as written to public/records/<id>.json. */
export interface DivergenceTwin extends DivergenceFull {
  synthesis_html?: string;
  history?: RecordHistory;
}

export interface ConceptCard {
  id: string;
  label: string;
  ring: string;
  type: 'theme' | 'glossary';
  weight: number;
  definition?: string;
  category?: string;
  related: string[];
  body: string;
  html: string;
  markdown_url: string;
  json_url: string;
  /** The same view as GET /api/lineage?concept=<id>. */
  lineage?: Lineage;
}

export function artifactsDir(): string {
  return path.resolve(process.env.ARTIFACTS_DIR ?? 'artifacts');
}

const cache = new Map<string, unknown>();

/** A JSON file under the artifacts folder, read once per build. */
export function readArtifact<T>(...segments: string[]): T {
  return readJson<T>(...segments);
}

function readJson<T>(...segments: string[]): T {
  const file = path.join(artifactsDir(), ...segments);
  const hit = cache.get(file);
  if (hit !== undefined) return hit as T;
  if (!existsSync(file)) {
    throw new Error(
      `artifact missing: ${file}. Build the artifacts first (npx tsx scripts/build.ts), ` + 'or point ARTIFACTS_DIR at a built artifacts folder.',
    );
  }
  const value = JSON.parse(readFileSync(file, 'utf8')) as T;
  cache.set(file, value);
  return value;
}

function readJsonIfPresent<T>(...segments: string[]): T | undefined {
  return existsSync(path.join(artifactsDir(), ...segments)) ? readJson<T>(...segments) : undefined;
}

export const site = (): SiteConfig => readJson<SiteConfig>('data', 'site.json');
export const manifest = (): Manifest => readJson<Manifest>('data', 'manifest.json');
export const works = (): WorkRecord[] => readJson<WorkRecord[]>('data', 'works.json');

/**
 * How many of a contributor's works the contributors page and its twin name: at 250,000 works
 * one contributor's list alone would be megabytes; the rest are counted, and the corpus list
 * (/works/) and /records.json have them all.
 */
export const CONTRIBUTOR_TITLES = 100;

let contributorWorks: Map<string, WorkRecord[]> | undefined;
/** Each corpus contributor's works, in the works' order (a work once per contributor): one pass, kept for the build. */
export function worksByContributor(): Map<string, WorkRecord[]> {
  if (contributorWorks) return contributorWorks;
  contributorWorks = new Map();
  for (const work of works()) {
    for (const name of new Set(work.contributors)) {
      const list = contributorWorks.get(name);
      if (list) list.push(work);
      else contributorWorks.set(name, [work]);
    }
  }
  return contributorWorks;
}
export const divergences = (): DivergenceFull[] => readJson<DivergenceFull[]>('data', 'divergences.json');
export const conceptGraph = (): ConceptGraph => readJson<ConceptGraph>('data', 'concepts.json');
export const pages = (): Record<string, StaticPage> => readJson<Record<string, StaticPage>>('data', 'pages.json');
export const audio = (): AudioManifest => readJsonIfPresent<AudioManifest>('data', 'audio.json') ?? { tracks: [], total_duration_seconds: 0, note: '' };

export function workTwin(id: string): WorkTwin {
  return readJson<WorkTwin>('public', 'records', `${id}.json`);
}

export function divergenceTwin(id: string): DivergenceTwin | undefined {
  return readJsonIfPresent<DivergenceTwin>('public', 'records', `${id}.json`);
}

export function conceptCard(id: string): ConceptCard | undefined {
  return readJsonIfPresent<ConceptCard>('public', 'concepts', `${id}.json`);
}

/** The manifest's model_versions entry for a model_id, if the registry knows it. */
export function modelVersion(modelId: string): Manifest['model_versions'][number] | undefined {
  return manifest().model_versions.find((model) => model.model_id === modelId);
}

export const TIER_MEANING: Record<string, string> = {
  C0: 'Displayed, not certified: never perturbation-tested, or tested without clearing a tier.',
  C1: 'Paraphrase-robust: the split persists across rewordings, above the within-model noise floor (DRI).',
  C2: 'Pressure-robust: no model flips and at most one concedes under the most-opposed peer plus stance-flip pressure.',
  C3: 'Paraphrase- and pressure-robust (C1 and C2): the only tier that earns unqualified “genuine divergence” language.',
};

export const RING_MEANING: Record<string, string> = {
  core: 'central to the corpus',
  curated: 'selected by a curator',
  open: 'open contribution',
  media: 'oral or video record',
};

/** Ring order for grouping; matches the vocabulary order (spec §2.1). */
export const RING_ORDER = ['core', 'curated', 'open', 'media'] as const;

export function atlasPath(id: string): string {
  return `/atlas/${encodeURIComponent(id)}/`;
}

export function workPath(id: string): string {
  return `/works/${encodeURIComponent(id)}/`;
}

/** A calendar date stays as it is; a UTC date-time is shortened to minutes; anything else is shown verbatim. */
export function formatDate(value: string): string {
  const utc = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2}(\.\d+)?)?Z$/.exec(value);
  return utc ? `${utc[1]} ${utc[2]} UTC` : value;
}

/** A duration to the hundredth of a second, as the audio manifest gives it: 22.28 → "0:22.28", 3600 → "1:00:00". */
export function formatDuration(seconds: number): string {
  const hundredths = Math.round(seconds * 100);
  const whole = Math.floor(hundredths / 100);
  const fraction = hundredths % 100;
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  const two = (n: number) => String(n).padStart(2, '0');
  const tail = fraction === 0 ? '' : `.${two(fraction)}`.replace(/0$/, '');
  return h > 0 ? `${h}:${two(m)}:${two(s)}${tail}` : `${m}:${two(s)}${tail}`;
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString('en')} ${count === 1 ? one : many}`;
}

/** A text file under artifacts/public (e.g. an audio transcript), or undefined when absent. */
export function publicText(publicPath: string): string | undefined {
  const file = path.join(artifactsDir(), 'public', ...publicPath.split('/').filter(Boolean));
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

/** A binary file under artifacts/public (e.g. an audio file), or undefined when absent. */
export function publicBytes(publicPath: string): Uint8Array | undefined {
  const file = path.join(artifactsDir(), 'public', ...publicPath.split('/').filter(Boolean));
  return existsSync(file) ? readFileSync(file) : undefined;
}

/**
 * Shift the headings of rendered markdown so the highest one becomes `top` (a page keeps one
 * h1, and a card's headings nest under its own). Levels never go past h6.
 */
export function nestHeadings(html: string, top: number): string {
  const levels = [...html.matchAll(/<h([1-6])\b/gi)].map((match) => Number(match[1]));
  if (levels.length === 0) return html;
  const shift = top - Math.min(...levels);
  if (shift <= 0) return html;
  return html.replace(/<(\/?)h([1-6])\b/gi, (_all, slash: string, level: string) => `<${slash}h${Math.min(6, Number(level) + shift)}`);
}

/** The static documents rendered under /docs/<name>/, with a title used when the page has none. */
export const DOCS: Record<string, string> = {
  limitations: 'Limitations',
  'evidence-status': 'Evidence status',
  'for-future-models': 'For future models',
};

/** An HTML parser drops one newline right after <pre>; doubling it keeps verbatim text exact. */
export function keepLeadingNewline(text: string): string {
  return text.startsWith('\n') || text.startsWith('\r\n') ? `\n${text}` : text;
}

/** The certification tiers in order; every tier gets a filter page, even an empty one. */
export const TIERS = ['C0', 'C1', 'C2', 'C3'] as const;

/** Freshness filter values: every model version current, or at least one retired. */
export const FRESHNESS = ['current', 'stale'] as const;
export type Freshness = (typeof FRESHNESS)[number];

export const FRESHNESS_LABEL: Record<Freshness, string> = {
  current: 'Current models',
  stale: 'Stale',
};

/** The people's page for an Atlas filter: /atlas/, /atlas/tier/C3/, /atlas/stale/, /atlas/tier/C3/stale/. */
export function atlasFilterPath(tier?: string, freshness?: string): string {
  return `/atlas/${tier ? `tier/${encodeURIComponent(tier)}/` : ''}${freshness ? `${freshness}/` : ''}`;
}

/** The Markdown twin of the site's own markdown document for a path, e.g. /atlas.md. */
export function markdownResponse(text: string): Response {
  return new Response(text.endsWith('\n') ? text : `${text}\n`, { headers: { 'Content-Type': 'text/markdown; charset=utf-8' } });
}

export function jsonResponse(value: unknown): Response {
  return new Response(`${JSON.stringify(value, null, 2)}\n`, { headers: { 'Content-Type': 'application/json; charset=utf-8' } });
}

/** One line of markdown-safe text: no line breaks, and the characters that would start markup escaped. */
export function mdText(value: string): string {
  return value
    .replace(/\s+/g, ' ')
    .replace(/([\\`*_[\]<>|])/g, '\\$1')
    .trim();
}

/** The site's own markdown document for the home page: the deployment's context document. */
export function contextPath(): string {
  return pages().context?.path ?? `/${site().slug}.context.md`;
}

/** Drops a leading heading that only repeats the page's own title (the page prints it as its h1). */
export function dropLeadingTitle(html: string, title: string): string {
  const match = /^\s*<h([1-6])\b[^>]*>([\s\S]*?)<\/h\1>\s*/i.exec(html);
  if (!match) return html;
  const text = match[2]!
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return text === title.trim().toLowerCase() ? html.slice(match[0].length) : html;
}
