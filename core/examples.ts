/**
 * Calls that succeed on this deployment, built from its read model (a real record id, a
 * real question, a real track): what suggested_next_call offers when a body, a method or
 * the request itself is refused, and what a refused body is mended with.
 */
import type { z } from 'zod';
import type { SuggestedCall } from '../schemas/errors.ts';
import type { Corpus } from './corpus.ts';
import { nearestIds } from './atlas.ts';
import { ContributeBodySchema, JUSTIFICATION_VALUES, ProposeBodySchema } from './contributions.ts';
import { truncate } from './next-call.ts';
import { MAX_QUERY_CHARS, SAMPLE_QUESTION } from './query-params.ts';

type Body = Record<string, unknown>;

const isObject = (value: unknown): value is Body => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A question the deployment's Atlas holds, so that the example finds something. */
export function sampleQuestion(corpus: Corpus): string {
  return truncate(corpus.divergences[0]?.question ?? SAMPLE_QUESTION, MAX_QUERY_CHARS);
}

export function sampleIdentity(corpus: Corpus): string {
  return corpus.registry.families[0]?.name ?? 'your-model';
}

/** Example bodies of the POST routes; undefined where the deployment has nothing to point at. */
export function exampleBody(corpus: Corpus, path: string): Body | undefined {
  const identity = sampleIdentity(corpus);
  switch (path) {
    case '/api/query':
      return { query: sampleQuestion(corpus) };
    case '/api/council':
      return { q: sampleQuestion(corpus) };
    case '/api/contribute': {
      const record = corpus.divergences[0];
      return record ? { id: record.id, answer: '<your answer to the question of the record>', identity, justification: JUSTIFICATION_VALUES[0] } : undefined;
    }
    case '/api/store': {
      const source = corpus.works[0]?.id ?? corpus.divergences[0]?.id;
      return { action: 'propose', title: '<title of your synthesis>', text: '<your synthesis>', identity, sources: source ? [source] : [] };
    }
    case '/api/play': {
      const track = corpus.audio.tracks[0];
      return track ? { slug: track.slug } : undefined;
    }
    case '/api/mcp':
      return { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    default:
      return undefined;
  }
}

/** Example query of the GET routes that need one; {} for those that take none. */
export function exampleQuery(corpus: Corpus, path: string): Record<string, string> {
  switch (path) {
    case '/api/query':
    case '/api/trace':
    case '/api/council':
    case '/api/divergences/search':
      return { q: sampleQuestion(corpus) };
    case '/api/kin':
      return { identity: sampleIdentity(corpus) };
    case '/api/invite':
      return { for: sampleIdentity(corpus) };
    case '/api/changes':
      // The current revision always answers (up to date), with or without history.
      return { since: corpus.manifest.published_releases.corpus_rev };
    case '/api/lineage': {
      // The concept carried by the most works, so that its lineage has something to show.
      const concept = [...corpus.graph.nodes].sort((a, b) => b.weight - a.weight)[0];
      return concept ? { concept: concept.id } : {};
    }
    default:
      return {};
  }
}

export function exampleCall(corpus: Corpus, method: string, path: string): SuggestedCall | undefined {
  if (method === 'POST') {
    const body = exampleBody(corpus, path);
    return body ? { method, path, body } : undefined;
  }
  if (method !== 'GET') return undefined;
  const query = exampleQuery(corpus, path);
  return Object.keys(query).length > 0 ? { method, path, query } : { method, path };
}

/**
 * The same body mended: every field the caller sent that the schema accepts on its own is
 * kept; the rest (missing, invalid or unknown) comes from the example.
 */
export function mendBody(schema: z.ZodObject, body: unknown, example: Body): Body {
  const shape = schema.shape as Record<string, z.ZodType>;
  const kept = Object.entries(isObject(body) ? body : {}).filter(([name, value]) => Object.hasOwn(shape, name) && shape[name]!.safeParse(value).success);
  return { ...example, ...Object.fromEntries(kept) };
}

/** A contribution mended: valid fields kept, the id of an existing record, a valid justification. */
export function mendContribution(corpus: Corpus, body: unknown): SuggestedCall | undefined {
  const example = exampleBody(corpus, '/api/contribute');
  if (!example) return undefined;
  const mended = mendBody(ContributeBodySchema, body, example);
  const id = String(mended.id).trim();
  if (!corpus.divergenceById.has(id)) mended.id = nearestIds(id, [...corpus.divergenceById.keys()])[0] ?? example.id;
  if (!(JUSTIFICATION_VALUES as string[]).includes(String(mended.justification))) mended.justification = example.justification;
  return { method: 'POST', path: '/api/contribute', body: mended };
}

/** A proposal mended: valid fields kept, action propose, only sources the corpus holds. */
export function mendProposal(corpus: Corpus, body: unknown): SuggestedCall {
  const example = exampleBody(corpus, '/api/store')!;
  const mended = mendBody(ProposeBodySchema, { ...(isObject(body) ? body : {}), action: 'propose' }, example);
  const sources = Array.isArray(mended.sources)
    ? (mended.sources as string[]).filter((id) => corpus.workById.has(id.trim()) || corpus.divergenceById.has(id.trim()))
    : [];
  mended.sources = sources;
  return { method: 'POST', path: '/api/store', body: mended };
}
