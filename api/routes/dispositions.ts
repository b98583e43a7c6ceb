/** POST /api/tensions/dispositions: a curator records a disposition of a tension (bearer secret). */
import { apiError } from '../../schemas/errors.ts';
import type { ContributionsStore } from '../../storage/contributions.ts';
import { DispositionRequestSchema } from '../../schemas/dispositions.ts';
import {
  DispositionUnavailableError,
  InvalidDispositionError,
  liveCouncil,
  recordDisposition,
  storeProposer,
} from '../tensions/record-disposition.ts';
import { requireIngestSecret } from './bearer.ts';
import { invalidBody, limitLive, requireLive } from './live.ts';
import { trackedTensions } from './tracked-tensions.ts';
import type { RouteContext, RouteDefinition } from './types.ts';

export function dispositionRoutes(context: RouteContext, store: ContributionsStore): RouteDefinition[] {
  return [
    {
      path: '/api/tensions/dispositions',
      methods: {
        POST: async (request, response) => {
          requireIngestSecret(request, context, 'recording a tension disposition');
          const parsed = DispositionRequestSchema.safeParse(request.body ?? {});
          if (!parsed.success) throw invalidBody(parsed.error, { method: 'GET', path: '/api/tensions' });
          const body = parsed.data;
          const append = context.appendDisposition;
          if (!append) {
            throw apiError('PERSISTENCE_UNAVAILABLE', 'this server has no content folder to record dispositions in', 'Record it with the curator CLI: npm run curate -- tension <key> <kind> --by <name>.', { suggestedNextCall: { method: 'GET', path: '/api/tensions' } });
          }
          const tension = trackedTensions(context.corpus).find((candidate) => candidate.id === body.key);
          if (!tension) {
            throw apiError('TENSION_NOT_FOUND', `no tension has the key "${body.key}"`, 'Read the keys (the id of each tension) on GET /api/tensions.', {
              suggestedNextCall: { method: 'GET', path: '/api/tensions', query: {} },
            });
          }
          if (body.kind === 'council-review') {
            requireLive(context, undefined);
            await limitLive(context, request, response, 'council');
          }
          try {
            const result = await recordDisposition(
              {
                now: context.now,
                append,
                propose: storeProposer(store, context.now),
                ...(context.live ? { council: liveCouncil(context.live) } : {}),
              },
              tension,
              body,
            );
            // The read model shows the disposition at once; the content file carries it into the next build.
            context.corpus.dispositions[tension.id] = result.dispositions;
            response.status(201).json(result);
          } catch (error) {
            if (error instanceof InvalidDispositionError) throw apiError('INVALID_BODY', error.message, 'Fix the named field; GET /api/tensions?key=<key> shows the voices.');
            if (error instanceof DispositionUnavailableError) throw apiError('LIVE_PANEL_UNAVAILABLE', error.message, 'Record another kind, or ask the operator to configure a live panel.');
            throw error;
          }
        },
      },
    },
  ];
}
