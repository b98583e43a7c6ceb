/**
 * Parsing of GET /api/query parameters (spec §4.2). Every scoping parameter is either
 * applied or rejected with a stable code: nothing is silently ignored.
 */
import { MAX_QUERY_CHARS } from '../schemas/limits.ts';
import { EVIDENCE_ORDER, FORMATS, LAYERS, RINGS, evidenceRank, type Evidence, type Format, type Glyph, type Layer, type Ring } from '../schemas/vocab.ts';
import { apiError, type RawQuery } from '../schemas/errors.ts';
import { isGlyph, parseGlyphs } from './glyphs.ts';
import { firstOf, truncate, withValue, without } from './next-call.ts';

export type { RawQuery };

export { MAX_QUERY_CHARS };
export const QUERY_PARAMETERS = [
  'q',
  'mode',
  'async',
  'sync',
  'job',
  'glyph',
  'format',
  'si',
  'layers',
  'sources',
  'exclude',
  'exclude_ids',
  'evidence_threshold',
  'rings',
  'ring',
  'tier',
  'limit',
  'second_round',
] as const;

export const DEFAULT_LIMIT = 8;
export const MAX_LIMIT = 50;

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

export function single(raw: RawQuery, name: string): string | undefined {
  const value = raw[name];
  if (Array.isArray(value)) {
    throw apiError(
      'PARAM_REPEATED',
      `parameter "${name}" was given ${value.length} times`,
      `Send "${name}" once; join several values with commas where the parameter takes a list.`,
      { repair: firstOf(name) },
    );
  }
  return value;
}

export function rejectUnknownParameters(raw: RawQuery, allowed: readonly string[], path: string): void {
  const unknown = Object.keys(raw).filter((name) => !allowed.includes(name));
  if (unknown.length > 0) {
    throw apiError(
      'UNKNOWN_PARAMETER',
      `unknown parameter${unknown.length > 1 ? 's' : ''} ${unknown.map((name) => `"${name}"`).join(', ')} on ${path}`,
      allowed.length === 0
        ? `Remove ${unknown.length > 1 ? 'them' : 'it'}: ${path} takes no query parameters. Unknown parameters are rejected so that no filter is silently ignored.`
        : `Remove ${unknown.length > 1 ? 'them' : 'it'} or use one of: ${allowed.join(', ')}. Unknown parameters are rejected so that no filter is silently ignored.`,
      { details: { unknown, allowed }, repair: without(...unknown) },
    );
  }
}

function commaList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}

function closedList<T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T[] | undefined {
  const parts = commaList(value);
  if (parts === undefined) return undefined;
  const lowered = parts.map((part) => part.toLowerCase());
  const unknown = lowered.filter((part) => !(allowed as readonly string[]).includes(part));
  if (unknown.length > 0 || lowered.length === 0) {
    throw apiError(
      'UNKNOWN_LAYER',
      lowered.length === 0
        ? `parameter "${name}" is empty`
        : `unknown value${unknown.length > 1 ? 's' : ''} ${unknown.map((part) => `"${part}"`).join(', ')} in "${name}"`,
      `Use a comma list of: ${allowed.join(', ')}. Scoping parameters are never silently ignored.`,
      { details: { parameter: name, unknown, allowed }, repair: without(name) },
    );
  }
  return [...new Set(lowered)] as T[];
}

function flag(name: string, value: string | undefined, truthy: readonly string[]): boolean {
  if (value === undefined) return false;
  const lowered = value.toLowerCase();
  if (truthy.includes(lowered)) return true;
  if (lowered === '0' || lowered === 'false') return false;
  throw apiError('INVALID_PARAMETER', `"${name}" must be ${truthy.join(' or ')} (or 0/false), got "${value}"`, `Send ${name}=${truthy[0]} or leave it out.`, {
    repair: without(name),
  });
}

export function parseQueryParameters(raw: RawQuery): FastQuery {
  rejectUnknownParameters(raw, QUERY_PARAMETERS, '/api/query');
  const q = single(raw, 'q');
  const job = single(raw, 'job');
  const mode = single(raw, 'mode');
  const asyncFlag = flag('async', single(raw, 'async'), ['1', 'true']);
  const syncFlag = flag('sync', single(raw, 'sync'), ['1', 'true']);
  const secondRoundValue = single(raw, 'second_round');
  const secondRound = secondRoundValue === undefined ? undefined : flag('second_round', secondRoundValue, ['1', 'true']);

  if (job !== undefined && job.trim() === '') {
    throw apiError('INVALID_PARAMETER', '"job" is empty', 'Send the job_id you received when you submitted the job.', {
      suggestedNextCall: USAGE_HINT,
      repair: without('job'),
    });
  }
  const besideJob = Object.keys(raw).filter((name) => name !== 'job');
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
  if (q !== undefined && q.length > MAX_QUERY_CHARS) {
    throw apiError(
      'QUERY_TOO_LONG',
      `q is ${q.length} characters; the limit is ${MAX_QUERY_CHARS}`,
      'Shorten the question to its core; send long context through POST /api/query instead.',
      { details: { limit: MAX_QUERY_CHARS }, repair: withValue('q', truncate(q, MAX_QUERY_CHARS)) },
    );
  }
  if (mode !== undefined && mode !== 'retrieve' && mode !== 'trace') {
    throw apiError(
      'UNKNOWN_MODE',
      `unknown mode "${mode}"`,
      'Use mode=retrieve (fast substrate only) or mode=trace (measured counterfactual), or leave mode out.',
      { details: { allowed: ['retrieve', 'trace'] }, repair: without('mode') },
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

  const format = single(raw, 'format') ?? 'context';
  if (!(FORMATS as readonly string[]).includes(format)) {
    throw apiError('UNKNOWN_FORMAT', `unknown format "${format}"`, `Use format=${FORMATS.join(', format=')}.`, {
      details: { allowed: FORMATS },
      repair: without('format'),
    });
  }

  const glyphParam = single(raw, 'glyph');
  if (glyphParam !== undefined && !isGlyph(glyphParam.trim())) {
    throw apiError('UNKNOWN_GLYPH', `unknown glyph "${glyphParam}"`, 'Use one of Ξ Ψ ∅ Ω ∞ Δ (see /api/info for what each does), or put the glyph in q.', {
      details: { allowed: ['Ξ', 'Ψ', '∅', 'Ω', '∞', 'Δ'] },
      repair: without('glyph'),
    });
  }
  const parsed = parseGlyphs(q ?? '');
  const glyphs = [...parsed.glyphs];
  if (glyphParam !== undefined) {
    const glyph = glyphParam.trim() as Glyph;
    if (!glyphs.includes(glyph)) glyphs.push(glyph);
  }

  const layersParam = closedList('layers', single(raw, 'layers'), LAYERS);
  const sourcesParam = closedList('sources', single(raw, 'sources'), LAYERS);
  const exclude = closedList('exclude', single(raw, 'exclude'), LAYERS);
  let layers = layersParam || sourcesParam ? [...new Set([...(layersParam ?? []), ...(sourcesParam ?? [])])] : undefined;
  if (exclude) layers = (layers ?? [...LAYERS]).filter((layer) => !exclude.includes(layer));
  if (layers && layers.length === 0) {
    throw apiError('CONFLICTING_PARAMETERS', 'the layer filters exclude every layer', `Keep at least one of ${LAYERS.join(', ')} in the pool.`, {
      repair: without('exclude'),
    });
  }

  const ringLists = ['rings', 'ring', 'tier'].map((name) => closedList(name, single(raw, name), RINGS));
  const rings = ringLists.some(Boolean) ? [...new Set(ringLists.flatMap((list) => list ?? []))] : undefined;

  const thresholdParam = single(raw, 'evidence_threshold');
  let evidenceThreshold: Evidence | undefined;
  if (thresholdParam !== undefined) {
    const lowered = thresholdParam.trim().toLowerCase();
    if (!(EVIDENCE_ORDER as readonly string[]).includes(lowered)) {
      throw apiError('UNKNOWN_EVIDENCE', `unknown evidence_threshold "${thresholdParam}"`, `Use one of (highest first): ${EVIDENCE_ORDER.join(', ')}.`, {
        details: { allowed: EVIDENCE_ORDER },
        repair: without('evidence_threshold'),
      });
    }
    evidenceThreshold = lowered as Evidence;
  }

  const excludeIdsParam = single(raw, 'exclude_ids');
  const excludeIds = excludeIdsParam === undefined ? undefined : [...new Set(commaList(excludeIdsParam))];

  const limitParam = single(raw, 'limit');
  let limit = DEFAULT_LIMIT;
  if (limitParam !== undefined) {
    if (!/^\d+$/.test(limitParam) || Number(limitParam) < 1 || Number(limitParam) > MAX_LIMIT) {
      throw apiError(
        'INVALID_PARAMETER',
        `limit must be an integer from 1 to ${MAX_LIMIT}, got "${limitParam}"`,
        `Send limit between 1 and ${MAX_LIMIT}, or leave it out for ${DEFAULT_LIMIT}.`,
        { repair: without('limit') },
      );
    }
    limit = Number(limitParam);
  }

  const si = single(raw, 'si');
  return {
    q: q ?? '',
    cleanQuery: parsed.cleanQuery,
    glyphs,
    mode: mode as FastQuery['mode'],
    async: asyncFlag,
    sync: syncFlag,
    ...(secondRound !== undefined ? { secondRound } : {}),
    job,
    format: format as Format,
    si: si !== undefined && si.trim() !== '' ? si.trim() : undefined,
    layers,
    rings,
    evidenceThreshold,
    excludeIds,
    limit,
  };
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
