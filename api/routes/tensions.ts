import { DISPOSITION_KINDS } from '../../schemas/content.ts';
import { TENSION_STATUSES } from '../../schemas/vocab.ts';
import { nearestConcepts, resolveConcept } from '../../core/lineage.ts';
import type { ParsedQuery } from '../../schemas/api/parameters.ts';
import type { TrackedTension } from '../../core/tension-identity.ts';
import { apiError } from '../../schemas/errors.ts';
import type { SightingsStore } from '../../storage/sightings.ts';
import { trackedTensions } from './tracked-tensions.ts';
import { queryOf, send, type RouteContext, type RouteDefinition } from './types.ts';
import { z } from 'zod';
import { TensionsResponseSchema } from '../../schemas/api.ts';
import { ok, queryParameter } from '../openapi/parts.ts';
import type { RouteSpec } from './types.ts';

export const LIFECYCLES = ['open', 'repaired'] as const;

type Filter = (tension: TrackedTension) => boolean;

const filter = { trim: true, emptyIsAbsent: true } as const;
const TENSIONS_QUERY = [
  queryParameter('status', z.enum(TENSION_STATUSES), 'Status of the latest sighting (case-insensitive); all when absent.', {
    ...filter,
    caseInsensitive: true,
    code: 'UNKNOWN_STATUS',
  }),
  queryParameter('disposition', z.enum([...DISPOSITION_KINDS, 'none']), 'Tensions with at least one disposition of this kind; none: tensions without any.', {
    ...filter,
    caseInsensitive: true,
    code: 'UNKNOWN_DISPOSITION',
  }),
  queryParameter('voice', z.string(), 'Tensions where this voice is one side (case-insensitive).', filter),
  queryParameter('concept', z.string(), 'Tensions sighted on Atlas records of this concept (id or label).', filter),
  queryParameter('lifecycle', z.enum(LIFECYCLES), `${LIFECYCLES.join(' or ')}.`, { ...filter, caseInsensitive: true, code: 'UNKNOWN_STATUS' }),
  queryParameter('key', z.string(), 'One tension by its key.', filter),
] as const;

/** Every filter given is applied (or, a concept that does not exist, refused): none is silently ignored. */
function filtersOf(query: ParsedQuery<typeof TENSIONS_QUERY>, context: RouteContext): { applied: Record<string, string>; filters: Filter[] } {
  const applied: Record<string, string> = {};
  const filters: Filter[] = [];
  const { status, disposition, lifecycle } = query;
  const voice = query.voice?.toLowerCase();
  const key = query.key?.toLowerCase();
  if (status !== undefined) {
    applied.status = status;
    filters.push((tension) => tension.status === status);
  }
  if (disposition !== undefined) {
    applied.disposition = disposition;
    filters.push((tension) => (disposition === 'none' ? tension.disposition === null : tension.dispositions.some((entry) => entry.kind === disposition)));
  }
  if (voice !== undefined) {
    applied.voice = voice;
    filters.push((tension) => tension.voices.some((name) => name.toLowerCase() === voice));
  }
  if (query.concept !== undefined) {
    const concept = resolveConcept(context.corpus.graph, query.concept);
    if (!concept) {
      const nearest = nearestConcepts(context.corpus.graph, query.concept);
      throw apiError(
        'INVALID_PARAMETER',
        `concept "${query.concept}" is not a concept id or label`,
        `Use a concept id, e.g. ${nearest.map((entry) => entry.id).join(', ')}.`,
        {
          details: { nearest },
          suggestedNextCall: { method: 'GET', path: '/api/tensions', query: { concept: nearest[0]?.id ?? '' } },
        },
      );
    }
    applied.concept = concept.id;
    filters.push((tension) => tension.concepts.includes(concept.id));
  }
  if (lifecycle !== undefined) {
    applied.lifecycle = lifecycle;
    filters.push((tension) => tension.lifecycle === lifecycle);
  }
  if (key !== undefined) {
    applied.key = key;
    // A key merged into another resolves to it.
    const resolved = context.corpus.tensionMerges.get(key) ?? key;
    filters.push((tension) => tension.id === resolved);
  }
  return { applied, filters };
}

export const TENSIONS: RouteSpec = {
  path: '/api/tensions',
  operations: {
    GET: {
      operationId: 'tensions',
      tags: ['atlas'],
      summary: 'Named-voice tensions, with sightings and dispositions',
      description:
        'A tension is one disagreement keyed by its two voices and its topic (id <voice>__<voice>__<topic>); each Atlas record naming it is a sighting. ' +
        'Curators record dispositions as content; a tension is repaired when its latest disposition is reclassified or canon-note. Filters combine (AND).',
      query: TENSIONS_QUERY,
      responses: { 200: ok('Tracked tensions.', TensionsResponseSchema) },
      errors: { 400: ['UNKNOWN_STATUS', 'UNKNOWN_DISPOSITION', 'INVALID_PARAMETER', 'UNKNOWN_PARAMETER', 'PARAM_REPEATED'] },
    },
  },
};

export function tensionRoutes(context: RouteContext, store: SightingsStore): RouteDefinition[] {
  return [
    {
      ...TENSIONS,
      methods: {
        GET: async (_request, response, input) => {
          const { applied, filters } = filtersOf(queryOf(input, TENSIONS_QUERY), context);
          // The store only adds kept deliberation sightings: when it cannot be reached, the Atlas
          // tensions are still served, and the response says what is missing.
          let kept: Awaited<ReturnType<SightingsStore['listTensionSightings']>> = [];
          let deliberationSightings: 'included' | 'unavailable' = 'included';
          try {
            kept = await store.listTensionSightings('kept');
          } catch (error) {
            deliberationSightings = 'unavailable';
            context.log?.(`tensions: kept deliberation sightings unavailable: ${(error as Error).message}`);
          }
          const all = trackedTensions(context.corpus, kept);
          const tensions = all.filter((tension) => filters.every((filter) => filter(tension)));
          const countBy = <T extends string>(values: readonly T[], read: (tension: TrackedTension) => string | null) =>
            Object.fromEntries(values.map((value) => [value, all.filter((tension) => read(tension) === value).length])) as Record<T, number>;
          send(response, TensionsResponseSchema, {
            status: TENSION_STATUSES.find((status) => status === applied.status) ?? null,
            filters: applied,
            count: tensions.length,
            total: all.length,
            sightings_total: context.corpus.tensions.length + kept.length,
            deliberation_sightings: deliberationSightings,
            by_status: countBy(TENSION_STATUSES, (tension) => tension.status),
            by_lifecycle: countBy(LIFECYCLES, (tension) => tension.lifecycle),
            status_legend: {
              unresolved: 'Named, with no settled reading of whether the voices truly disagree.',
              divergent: 'The voices hold incompatible positions on the named axis.',
              emerging: 'A split that appears in later answers or re-elicitations and is still forming.',
            },
            lifecycle_legend: {
              open: 'No curator disposition yet, or the latest is held, crux, synthesis-drafted or council-review.',
              repaired: "The latest curator disposition is reclassified (one side is an earlier-stage view) or canon-note (a curator's ruling).",
            },
            note:
              'A tension is one named-voice disagreement, keyed by its two voices and its topic (id: <voice>__<voice>__<topic>). ' +
              'Each Atlas record that names it is a sighting, and so is a live deliberation that named it once a curator kept that sighting (deliberation sightings are pending until then); status and claims are those of the latest sighting. Dispositions are curator decisions recorded as content (content/tensions/<id>.yaml), oldest first.',
            tensions,
          });
        },
      },
    },
  ];
}
