/**
 * The federation documents (docs/FEDERATION.md): node document, signed manifest, its signature;
 * and push (POST /api/federation/offer), off unless configured.
 */
import type { Request } from 'express';
import { z } from 'zod';
import { apiError } from '../../schemas/errors.ts';
import { FederationError } from '../federation/errors.ts';
import type { FederationNode } from '../federation/node.ts';
import { receiveOffer } from '../federation/offer.ts';
import type { Window } from '../http/rate-limit.ts';
import type { FederationStore } from '../../storage/federation.ts';
import { FederationOfferSchema } from '../../schemas/federation.ts';
import { bodyOf, queryOf, send, type RouteContext, type RouteDefinition, type RouteInput } from './types.ts';
import {
  OfferAcceptedSchema,
  NodeDocumentSchema,
  FederationManifestSchema,
  KeyRotationsDocumentSchema,
  ManifestSignatureSchema,
} from '../../schemas/federation.ts';
import { CACHE_HEADER, noParameters, ok, queryParameter, storeDown } from '../openapi/parts.ts';
import { CORPUS_REV_PATTERN } from '../../schemas/api/changes.ts';
import type { OperationSpec, RouteSpec } from './types.ts';

export interface PushOptions {
  enabled: boolean;
  /** Offers per client and window. */
  limit: Window;
  store: FederationStore;
}

export const DEFAULT_OFFER_LIMIT: Window = { limit: 30, windowMs: 3_600_000 };

/** Every refused offer points at what this node offers and how its key reads (always readable). */
const NODE_DOCUMENT = { method: 'GET', path: '/.well-known/polyphony-node.json' } as const;

const tags = ['federation'];
const document = (operation: Omit<OperationSpec, 'tags' | 'errors'> & Partial<Pick<OperationSpec, 'errors'>>): { GET: OperationSpec } => ({
  GET: { tags, query: [], errors: noParameters, ...operation },
});

export const NODE_DOCUMENT_ROUTE: RouteSpec = {
  path: '/.well-known/polyphony-node.json',
  operations: document({
    operationId: 'getFederationNode',
    summary: 'Federation node document: identity, licences, offers and public key',
    description: "docs/FEDERATION.md. The origin is FEDERATION_ORIGIN, else site.base_url, else the request's own origin. The private key is never served.",
    responses: { 200: ok('Node document.', NodeDocumentSchema, CACHE_HEADER) },
  }),
};

/** ?since= on the manifest and its signature: the revision a puller last accepted (docs/FEDERATION.md). */
const SINCE_QUERY = [
  queryParameter(
    'since',
    z.string().regex(CORPUS_REV_PATTERN),
    "The corpus_rev of the manifest you last accepted from this node (16 lower-case hex digits). When the node's history holds it, the manifest lists only the records added or changed since then and carries since; otherwise it lists every record and carries no since. Send the same value to manifest.json and manifest.sig.",
    { trim: true, example: '0123456789abcdef' },
  ),
] as const;
const SINCE_ERRORS = { 400: ['UNKNOWN_PARAMETER', 'INVALID_PARAMETER', 'PARAM_REPEATED'] } as const;

export const FEDERATION_MANIFEST: RouteSpec = {
  path: '/federation/manifest.json',
  operations: document({
    operationId: 'getFederationManifest',
    summary: "Signed list of this deployment's Atlas records with their twin hashes and record signatures",
    description:
      'Signed for a 10-minute window, valid one hour; its signature is at /federation/manifest.sig (with the same since). Check it with npm run verify -- <url>. With since, a delta a puller can verify the same way: only the records added or changed since that revision.',
    query: SINCE_QUERY,
    errors: SINCE_ERRORS,
    responses: { 200: ok('Federation manifest.', FederationManifestSchema, CACHE_HEADER) },
  }),
};

export const FEDERATION_SIGNATURE: RouteSpec = {
  path: '/federation/manifest.sig',
  operations: document({
    operationId: 'getFederationManifestSignature',
    summary: 'Ed25519 signature of the federation manifest',
    description: 'The signature of /federation/manifest.json asked with the same since (or none).',
    query: SINCE_QUERY,
    errors: SINCE_ERRORS,
    responses: { 200: ok('Signature document.', ManifestSignatureSchema, CACHE_HEADER) },
  }),
};

export const KEY_ROTATIONS_ROUTE: RouteSpec = {
  path: '/.well-known/polyphony-key-rotations.json',
  operations: document({
    operationId: 'getFederationKeyRotations',
    summary: "This node's key rotation statements, oldest first (empty until it rotates its key)",
    description:
      'docs/FEDERATION.md. Each statement names the retired key and its replacement and is signed by both; a puller that pinned an earlier key follows the chain to the current one. Written by npm run federate -- rotate-key.',
    responses: { 200: ok('Key rotation statements.', KeyRotationsDocumentSchema, CACHE_HEADER) },
  }),
};

export const FEDERATION_OFFER: RouteSpec = {
  path: '/api/federation/offer',
  operations: {
    POST: {
      operationId: 'federationOffer',
      tags,
      summary: 'Push: a pinned peer offers signed records; they land as pending imports',
      description:
        'Off by default (FEDERATION_PUSH=1). Accepted only from an origin this deployment has pulled from, signed with the key pinned for it; every record hash and record signature is checked. Nothing is published until a curator approves it. Rate-limited per client when on. A body of the wrong shape answers 400 INVALID_BODY whether push is on or off; a well-formed offer to a deployment with push off answers 403 PUSH_DISABLED.',
      body: { schema: FederationOfferSchema, description: 'The signed offer (docs/FEDERATION.md).', required: true },
      responses: { 202: ok('Staged as pending imports.', OfferAcceptedSchema) },
      errors: { 400: ['INVALID_BODY'], 403: ['PUSH_DISABLED', 'OFFER_UNAUTHENTICATED'], 422: ['OFFER_REFUSED'], 429: ['RATE_LIMITED'], ...storeDown },
    },
  },
};

export function federationRoutes(context: RouteContext, node: FederationNode, push: PushOptions): RouteDefinition[] {
  const requestOrigin = (request: Request) => `${request.protocol}://${request.get('host') ?? 'localhost'}`;
  const route = <S extends z.ZodType>(spec: RouteSpec, schema: S, body: (request: Request, input: RouteInput) => Promise<z.output<S>>): RouteDefinition => ({
    ...spec,
    methods: {
      GET: async (request, response, input) => {
        response.setHeader('Cache-Control', 'public, max-age=60');
        send(response, schema, await body(request, input));
      },
    },
  });
  const signed = (request: Request, input: RouteInput) => node.signedManifest(requestOrigin(request), context.now(), queryOf(input, SINCE_QUERY).since);
  return [
    route(NODE_DOCUMENT_ROUTE, NodeDocumentSchema, (request) => node.nodeDocument(requestOrigin(request))),
    route(FEDERATION_MANIFEST, FederationManifestSchema, async (request, input) => (await signed(request, input)).manifest),
    route(FEDERATION_SIGNATURE, ManifestSignatureSchema, async (request, input) => (await signed(request, input)).signature),
    route(KEY_ROTATIONS_ROUTE, KeyRotationsDocumentSchema, () => node.keyRotations()),
    {
      ...FEDERATION_OFFER,
      // Order: the rate limit (when push is on, so every offer counts), the body's shape (400
      // whether push is on or off, so a client learns what to fix), then PUSH_DISABLED.
      bodies: {
        POST: {
          before: async (request, response) => {
            if (push.enabled) await context.limiter!.check(request, response, 'federation-offer', push.limit);
          },
          action:
            'Send {offer: {protocol, node_id, origin, name, licence, attribution, signed_at, records: [{id, sha256, signature, markdown}]}, signature}; see docs/FEDERATION.md.',
          mend: () => NODE_DOCUMENT,
        },
      },
      methods: {
        POST: async (request, response, input) => {
          const offer = bodyOf(input, FederationOfferSchema);
          if (!push.enabled) {
            throw apiError(
              'PUSH_DISABLED',
              'this deployment does not accept pushed records (FEDERATION_PUSH is off)',
              'Do not retry: ask the operator to pull from your deployment with npm run federate -- pull <your url>.',
              { suggestedNextCall: NODE_DOCUMENT },
            );
          }
          let outcome: { staged: string[]; unchanged: number };
          try {
            outcome = await receiveOffer(offer, (request.body as { offer: unknown }).offer, {
              store: push.store,
              localPrefix: context.corpus.site.id_prefix,
              now: context.now(),
            });
          } catch (error) {
            if (!(error instanceof FederationError)) throw error;
            if (error.code === 'KEY_CHANGED' || error.code === 'BAD_SIGNATURE') {
              throw apiError(
                'OFFER_UNAUTHENTICATED',
                error.message,
                'Do not retry as is: the operator must pull from your deployment first, and the offer must be signed with the key it pinned.',
                { details: { reason: error.code }, suggestedNextCall: NODE_DOCUMENT },
              );
            }
            throw apiError('OFFER_REFUSED', error.message, 'Fix what the message names and send a freshly signed offer; nothing was staged.', {
              details: { reason: error.code },
              suggestedNextCall: NODE_DOCUMENT,
            });
          }
          send(response, OfferAcceptedSchema, outcome, 202);
        },
      },
    },
  ];
}
