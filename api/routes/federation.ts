/** The federation documents (docs/FEDERATION.md): node document, signed manifest, its signature. */
import type { Request } from 'express';
import { rejectUnknownParameters, type RawQuery } from '../core/query-params.ts';
import type { FederationNode } from '../federation/node.ts';
import type { RouteContext, RouteDefinition } from './types.ts';

export function federationRoutes(context: RouteContext, node: FederationNode): RouteDefinition[] {
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
  ];
}
