/** POST /api/tensions/dispositions: a curator records a disposition of a tension (bearer secret). */
import { apiError } from '../../schemas/errors.ts';
import { DispositionNotWritableError } from '../../content-files/tension-dispositions.ts';
import type { ContributionsStore } from '../../storage/contributions.ts';
import { DispositionRequestSchema } from '../../schemas/dispositions.ts';
import { DispositionUnavailableError, InvalidDispositionError, liveCouncil, recordDisposition, storeProposer } from '../tensions/record-disposition.ts';
import { requireIngestSecret } from './bearer.ts';
import { limitLive, requireLive } from './live-support.ts';
import { trackedTensions } from './tracked-tensions.ts';
import { bodyOf, send, type RouteContext, type RouteDefinition } from './types.ts';
import { DispositionRecordedSchema, DispositionRequestNamedSchema } from '../../schemas/api.ts';
import { ok } from '../openapi/parts.ts';
import type { RouteSpec } from './types.ts';

export const DISPOSITIONS: RouteSpec = {
  path: '/api/tensions/dispositions',
  operations: {
    POST: {
      operationId: 'recordDisposition',
      tags: ['atlas'],
      summary: 'Record a curator disposition of a tension (needs the ingestion secret)',
      description:
        "Appends one disposition to the tension's history in the content folder (content/tensions/<key>.yaml), validated like the build; history is append-only. " +
        'held, reclassified, canon-note and crux are notes. synthesis-drafted stores a pending proposal (reviewed with the curator CLI like any proposal). ' +
        'council-review re-asks the fault line to the live panel under the spending ceiling and persists the result as a new Atlas record. The read model shows the disposition at once; commit the file for the next build.',
      body: { schema: DispositionRequestNamedSchema, description: 'The disposition.', required: true },
      security: [{ ingestSecret: [] }],
      responses: { 201: ok('The disposition and the whole history.', DispositionRecordedSchema) },
      errors: {
        400: ['INVALID_BODY'],
        401: ['AUTH_REQUIRED'],
        403: ['AUTH_INVALID'],
        404: ['TENSION_NOT_FOUND'],
        429: ['RATE_LIMITED'],
        502: ['PROVIDER_FAILED', 'NOT_PERSISTABLE'],
        503: ['LIVE_PANEL_UNAVAILABLE', 'SPENDING_CEILING_REACHED', 'PERSISTENCE_UNAVAILABLE', 'STORE_UNAVAILABLE'],
      },
    },
  },
};

export function dispositionRoutes(context: RouteContext, store: ContributionsStore): RouteDefinition[] {
  return [
    {
      ...DISPOSITIONS,
      bodies: {
        POST: {
          // The secret first: a body is read only from a curator.
          before: (request) => requireIngestSecret(request, context, 'recording a tension disposition'),
          mend: () => ({ method: 'GET', path: '/api/tensions' }),
        },
      },
      methods: {
        POST: async (request, response, input) => {
          const body = bodyOf(input, DispositionRequestSchema);
          const append = context.appendDisposition;
          if (!append) {
            throw apiError(
              'PERSISTENCE_UNAVAILABLE',
              'this server has no content folder to record dispositions in',
              'Record it with the curator CLI: npm run curate -- tension <key> <kind> --by <name>.',
              { suggestedNextCall: { method: 'GET', path: '/api/tensions' } },
            );
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
            send(response, DispositionRecordedSchema, result, 201);
          } catch (error) {
            if (error instanceof InvalidDispositionError)
              throw apiError('INVALID_BODY', error.message, 'Fix the named field; GET /api/tensions?key=<key> shows the voices.');
            if (error instanceof DispositionNotWritableError)
              throw apiError(
                'TENSION_NOT_FOUND',
                `the tension "${tension.id}" is not one of the content folder's tensions (it is sighted only in records kept in the store, such as persisted councils), so no disposition can be written for it yet; nothing was written`,
                'Dispose a tension whose records are in the content folder, or ask the operator to export the persisted records (npm run export:records) and rebuild, then record it.',
                { suggestedNextCall: { method: 'GET', path: '/api/tensions', query: {} } },
              );
            if (error instanceof DispositionUnavailableError)
              throw apiError('LIVE_PANEL_UNAVAILABLE', error.message, 'Record another kind, or ask the operator to configure a live panel.');
            throw error;
          }
        },
      },
    },
  ];
}
