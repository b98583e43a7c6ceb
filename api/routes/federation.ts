/**
 * The federation documents (docs/FEDERATION.md): node document, signed manifest, its signature;
 * and push (POST /api/federation/offer), off unless configured.
 */
import type { Request } from 'express';
import { apiError } from '../../schemas/errors.ts';
import { rejectUnknownParameters, type RawQuery } from '../../core/query-params.ts';
import { FederationError } from '../federation/errors.ts';
import type { FederationNode } from '../federation/node.ts';
import { receiveOffer } from '../federation/offer.ts';
import type { Window } from '../http/rate-limit.ts';
import type { FederationStore } from '../../storage/federation.ts';
import { FederationOfferSchema } from '../../schemas/federation.ts';
import type { RouteContext, RouteDefinition } from './types.ts';

export interface PushOptions {
  enabled: boolean;
  /** Offers per client and window. */
  limit: Window;
  store: FederationStore;
}

export const DEFAULT_OFFER_LIMIT: Window = { limit: 30, windowMs: 3_600_000 };

/** Every refused offer points at what this node offers and how its key reads (always readable). */
const NODE_DOCUMENT = { method: 'GET', path: '/.well-known/polyphony-node.json' } as const;

export function federationRoutes(context: RouteContext, node: FederationNode, push: PushOptions): RouteDefinition[] {
  const requestOrigin = (request: Request) => `${request.protocol}://${request.get('host') ?? 'localhost'}`;
  const route = (path: string, body: (request: Request) => Promise<unknown>): RouteDefinition => ({
    path,
    methods: {
      GET: async (request, response) => {
        rejectUnknownParameters(request.query as RawQuery, [], path);
        response.setHeader('Cache-Control', 'public, max-age=60');
        response.json(await body(request));
      },
    },
  });
  return [
    route('/.well-known/polyphony-node.json', (request) => node.nodeDocument(requestOrigin(request))),
    route('/federation/manifest.json', async (request) => (await node.signedManifest(requestOrigin(request), context.now())).manifest),
    route('/federation/manifest.sig', async (request) => (await node.signedManifest(requestOrigin(request), context.now())).signature),
    {
      path: '/api/federation/offer',
      methods: {
        POST: async (request, response) => {
          // Order: the rate limit (when push is on, so every offer counts), the body's shape (400
          // whether push is on or off, so a client learns what to fix), then PUSH_DISABLED.
          if (push.enabled) await context.limiter!.check(request, response, 'federation-offer', push.limit);
          const parsed = FederationOfferSchema.safeParse(request.body);
          if (!parsed.success) {
            const issue = parsed.error.issues[0]!;
            throw apiError('INVALID_BODY', `the offer is not valid: ${issue.path.join('.') || '(body)'} ${issue.message}`, 'Send {offer: {protocol, node_id, origin, name, licence, attribution, signed_at, records: [{id, sha256, signature, markdown}]}, signature}; see docs/FEDERATION.md.', { suggestedNextCall: NODE_DOCUMENT });
          }
          if (!push.enabled) {
            throw apiError('PUSH_DISABLED', 'this deployment does not accept pushed records (FEDERATION_PUSH is off)', 'Do not retry: ask the operator to pull from your deployment with npm run federate -- pull <your url>.', { suggestedNextCall: NODE_DOCUMENT });
          }
          let outcome: { staged: string[]; unchanged: number };
          try {
            outcome = await receiveOffer(parsed.data, (request.body as { offer: unknown }).offer, { store: push.store, localPrefix: context.corpus.site.id_prefix, now: context.now() });
          } catch (error) {
            if (!(error instanceof FederationError)) throw error;
            if (error.code === 'KEY_CHANGED' || error.code === 'BAD_SIGNATURE') {
              throw apiError('OFFER_UNAUTHENTICATED', error.message, 'Do not retry as is: the operator must pull from your deployment first, and the offer must be signed with the key it pinned.', { details: { reason: error.code }, suggestedNextCall: NODE_DOCUMENT });
            }
            throw apiError('OFFER_REFUSED', error.message, 'Fix what the message names and send a freshly signed offer; nothing was staged.', { details: { reason: error.code }, suggestedNextCall: NODE_DOCUMENT });
          }
          response.status(202).json(outcome);
        },
      },
    },
  ];
}
