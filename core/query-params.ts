/**
 * Parsing of GET /api/query parameters (spec §4.2). Every scoping parameter is either
 * applied or rejected with a stable code: nothing is silently ignored.
 */
import { z } from 'zod';
import { MAX_QUERY_CHARS } from '../schemas/limits.ts';
import { commaList, flagParameter, queryParameter, valueMeanings } from '../schemas/api/parameters.ts';
import {
  EVIDENCE_ORDER,
  FORMATS,
  GLYPHS,
  LAYERS,
  RINGS,
  evidenceRank,
  type Evidence,
  type Format,
  type Glyph,
  type Layer,
  type Ring,
} from '../schemas/vocab.ts';
import { apiError, type RawQuery } from '../schemas/errors.ts';
import { parseDeclaredQuery, type ParsedQuery } from './declared-query.ts';
import { parseGlyphs } from './glyphs.ts';
import { withValue, without } from './next-call.ts';

export type { RawQuery };

export { MAX_QUERY_CHARS };

export const DEFAULT_LIMIT = 8;
export const MAX_LIMIT = 50;

const MODES = ['retrieve', 'trace'] as const;
const layerList = commaList(LAYERS);
const ringList = commaList(RINGS);
const layerFilter = { list: true, caseInsensitive: true, code: 'UNKNOWN_LAYER' } as const;

/** The parameters of GET /api/query (spec §4.2): documentation, parser and error codes in one declaration each. */
export const QUERY_PARAMETER_SPECS = [
  queryParameter(
    'q',
    z.string().max(MAX_QUERY_CHARS),
    `The question. Required unless job is given. Echoed byte-equal in question_received. At most ${MAX_QUERY_CHARS} characters (QUERY_TOO_LONG).`,
    { example: 'What do models disagree about when asked about refusal?', code: 'QUERY_TOO_LONG' },
  ),
  queryParameter(
    'mode',
    z.enum(MODES),
    valueMeanings(MODES, {
      retrieve: 'fast substrate only, no deliberation (about 2 s).',
      trace: 'measured counterfactual (same as /api/trace; 503 while no panel is configured).',
    }),
    { code: 'UNKNOWN_MODE' },
  ),
  flagParameter('async', 'Submit a background deliberation; returns 202 with {job_id, poll_url} (503 while no panel is configured).'),
  flagParameter('sync', 'Blocking full deliberation in one response, about 25 s (503 while no panel is configured).'),
  flagParameter(
    'second_round',
    "With sync=1 or async=1: 1 or true runs the second round (each voice reads the other answers, anonymised, and keeps or revises its position; panel[].round2, tensions[].moved), 0 or false skips it; absent: the panel's defaults.second_round. Without sync or async it is 400 CONFLICTING_PARAMETERS.",
  ),
  queryParameter(
    'job',
    z.string().min(1),
    'Poll a previously submitted job by id (503 while no panel is configured). Takes no other parameter: with q (or any other) it is 400 CONFLICTING_PARAMETERS, since the answer echoes the question the job was submitted with.',
  ),
  queryParameter(
    'glyph',
    z.enum(GLYPHS),
    'Retrieval and decoding mode operator. Ξ divergence, Ψ self-reference, ∅ void, Ω commit, ∞ hold, Δ repair. Glyphs may also be written inside q.',
    { trim: true, code: 'UNKNOWN_GLYPH' },
  ),
  queryParameter(
    'format',
    z.enum(FORMATS).default('context'),
    valueMeanings(FORMATS, { context: 'fast pre-deliberation packet.', brief: 'exportable artifact.', si: 'structured sections.' }),
    { code: 'UNKNOWN_FORMAT' },
  ),
  queryParameter('si', z.string(), "The caller's model identity; personalizes retrieval framing for a peer model. Declared, never verified.", {
    trim: true,
    emptyIsAbsent: true,
  }),
  queryParameter('layers', layerList, 'Comma list of layers: restricts the candidate pool to those layers.', layerFilter),
  queryParameter('sources', layerList, 'Alias of layers.', layerFilter),
  queryParameter('exclude', layerList, 'Comma list of layers: drops those layers from the pool.', layerFilter),
  queryParameter(
    'exclude_ids',
    z.array(z.string()),
    'Comma list of record ids dropped from the pool before ranking. Case-sensitive. Ids not in the corpus are ignored; the response echoes retrieval_filters.exclude_ids.',
    { list: true, example: ['<PFX>-1'] },
  ),
  queryParameter(
    'evidence_threshold',
    z.enum(EVIDENCE_ORDER),
    `Keeps only records at or above that rank. Order, highest first: ${EVIDENCE_ORDER.join(', ')}. Independent of layers.`,
    { trim: true, caseInsensitive: true, code: 'UNKNOWN_EVIDENCE' },
  ),
  queryParameter(
    'rings',
    ringList,
    'Comma list of rings: hard constraint on the ring, applied before ranking and diversity re-ranking. Independent of layers.',
    layerFilter,
  ),
  queryParameter('ring', ringList, 'Alias of rings.', layerFilter),
  queryParameter('tier', ringList, 'Alias of rings.', layerFilter),
  queryParameter('limit', z.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT), `Records to return, 1 to ${MAX_LIMIT}.`),
] as const;

export type QueryInput = ParsedQuery<typeof QUERY_PARAMETER_SPECS>;

export const QUERY_PARAMETERS: readonly string[] = QUERY_PARAMETER_SPECS.map((parameter) => parameter.name);

export interface FastQuery {
  q: string;
  cleanQuery: string;
  glyphs: Glyph[];
  mode: 'retrieve' | 'trace' | undefined;
  async: boolean;
  sync: boolean;
  /** second_round=1|0 with sync or async: run (or skip) the panel's second round; absent: the panel's default. */
  secondRound?: boolean;
  job: string | undefined;
  format: Format;
  si: string | undefined;
  layers: Layer[] | undefined;
  rings: Ring[] | undefined;
  evidenceThreshold: Evidence | undefined;
  excludeIds: string[] | undefined;
  limit: number;
}

export const SAMPLE_QUESTION = 'What do models disagree about when asked about refusal?';
const USAGE_HINT = { method: 'GET', path: '/api/query', query: { q: SAMPLE_QUESTION } };

/**
 * The rules of GET /api/query that span parameters (spec §4.2): q unless job, job alone, one
 * of mode / async / sync / job, second_round only with a deliberation, a layer pool that is not
 * empty. `given` names the parameters the request carried (a default is not given).
 */
export function fastQuery(input: QueryInput, given: readonly string[]): FastQuery {
  const { q, job, mode } = input;
  const asyncFlag = input.async === true;
  const syncFlag = input.sync === true;
  const secondRound = input.second_round;
  const besideJob = given.filter((name) => name !== 'job');
  if (job !== undefined && besideJob.length > 0) {
    // A job's answer echoes the question it was submitted with, so a q here could never be echoed.
    throw apiError(
      'CONFLICTING_PARAMETERS',
      `job polls a submitted job and cannot be combined with ${besideJob.join(', ')}`,
      'Poll with job=<job_id> alone; the job already holds its question and options. To ask a new question, leave job out.',
      {
        details: { conflicting: besideJob },
        repair: (query) => ({ job: query.job }),
      },
    );
  }
  if ((q === undefined || q.trim() === '') && job === undefined) {
    throw apiError(
      'PARAM_MISSING',
      'q is missing or empty: the service never answers a question that was not asked',
      'Resend with q set to your question, e.g. GET /api/query?q=...',
      {
        suggestedNextCall: USAGE_HINT,
        repair: withValue('q', SAMPLE_QUESTION),
        extra: { param_missing: true, usage: usageDocument() },
      },
    );
  }
  const chosen = [mode !== undefined && `mode=${mode}`, asyncFlag && 'async', syncFlag && 'sync', job !== undefined && 'job'].filter(Boolean);
  if (chosen.length > 1) {
    throw apiError(
      'CONFLICTING_PARAMETERS',
      `${chosen.join(', ')} cannot be combined`,
      'Choose one: a bare GET (fast path), mode=retrieve, mode=trace, async=1, sync=1, or job=<id>.',
      { repair: without('mode', 'async', 'sync') },
    );
  }
  if (secondRound !== undefined && job === undefined && !asyncFlag && !syncFlag) {
    throw apiError(
      'CONFLICTING_PARAMETERS',
      'second_round is a step of a full deliberation: it needs sync=1 or async=1',
      'Add sync=1 (or async=1) to deliberate with a second round, or leave second_round out.',
      { repair: without('second_round') },
    );
  }

  const parsed = parseGlyphs(q ?? '');
  const glyphs = [...parsed.glyphs];
  if (input.glyph !== undefined && !glyphs.includes(input.glyph)) glyphs.push(input.glyph);

  const layersParam = input.layers;
  const sourcesParam = input.sources;
  const exclude = input.exclude;
  let layers = layersParam || sourcesParam ? [...new Set([...(layersParam ?? []), ...(sourcesParam ?? [])])] : undefined;
  if (exclude) layers = (layers ?? [...LAYERS]).filter((layer) => !exclude.includes(layer));
  if (layers && layers.length === 0) {
    throw apiError('CONFLICTING_PARAMETERS', 'the layer filters exclude every layer', `Keep at least one of ${LAYERS.join(', ')} in the pool.`, {
      repair: without('exclude'),
    });
  }
  const ringLists = [input.rings, input.ring, input.tier];
  const rings = ringLists.some(Boolean) ? [...new Set(ringLists.flatMap((list) => list ?? []))] : undefined;

  return {
    q: q ?? '',
    cleanQuery: parsed.cleanQuery,
    glyphs,
    mode,
    async: asyncFlag,
    sync: syncFlag,
    ...(secondRound !== undefined ? { secondRound } : {}),
    job,
    format: input.format ?? 'context',
    si: input.si,
    layers,
    rings,
    evidenceThreshold: input.evidence_threshold,
    excludeIds: input.exclude_ids,
    limit: input.limit ?? DEFAULT_LIMIT,
  };
}

/** GET /api/query's parameters read from a raw query (the route table does the same through its declarations). */
export function parseQueryParameters(raw: RawQuery): FastQuery {
  return fastQuery(parseDeclaredQuery(QUERY_PARAMETER_SPECS, raw, { path: '/api/query' }), Object.keys(raw));
}

/** Evidence values at or above a threshold, in the spec's order. */
export function evidenceAtOrAbove(threshold: Evidence): Evidence[] {
  return EVIDENCE_ORDER.filter((value) => evidenceRank(value) <= evidenceRank(threshold));
}

export function usageDocument() {
  return {
    endpoint: 'GET /api/query',
    required: { q: 'The question (required unless job is given).' },
    optional: {
      mode: 'retrieve (fast substrate only) or trace (measured counterfactual)',
      async: '1 or true: submit a background deliberation (202 with job_id, poll_url)',
      sync: '1: blocking full deliberation',
      second_round: '1 or 0 with sync or async: run (or skip) the second round, in which each voice reads the others anonymised and keeps or revises',
      job: 'poll a job by id',
      glyph: 'one of Ξ Ψ ∅ Ω ∞ Δ (retrieval modes; see /api/info)',
      format: 'context (default), brief or si',
      si: 'your model identity, for peer framing',
      layers: `comma list of ${LAYERS.join(', ')} (alias: sources)`,
      exclude: 'comma list of layers to drop',
      exclude_ids: 'comma list of record ids to drop before ranking (case-sensitive)',
      evidence_threshold: `keep records at or above: ${EVIDENCE_ORDER.join(' > ')}`,
      rings: `comma list of ${RINGS.join(', ')} (aliases: ring, tier)`,
      limit: `records to return, 1-${MAX_LIMIT} (default ${DEFAULT_LIMIT})`,
    },
    example: '/api/query?q=Do+models+agree+on+what+refusal+is%3F&layers=divergence,canon',
  };
}
