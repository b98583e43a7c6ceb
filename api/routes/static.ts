/** Static documents whose answer depends on the deployment (the context document's name, the interface description). */
import path from 'node:path';
import type { Request, Response } from 'express';
import { createOpenApiDocument } from '../openapi.ts';
import type { RouteContext, RouteDefinition } from './types.ts';

export function staticRoutes(context: RouteContext): RouteDefinition[] {
  const { site } = context.corpus;
  // Built once per app: the document depends only on the deployment's name, slug and id prefix.
  const openApi = createOpenApiDocument({ siteName: site.name, siteSlug: site.slug, idPrefix: site.id_prefix });
  return [
    {
      path: '/openapi.json',
      methods: {
        GET: (_request, response) => {
          response.setHeader('Cache-Control', 'public, max-age=300');
          response.json(openApi);
        },
      },
    },
    // The concept index (spec §4.9 /concepts/) is also a plain file at /concepts.json.
    ...['/concepts', '/concepts/'].map((routePath) => ({
      path: routePath,
      methods: {
        GET: (_request: Request, response: Response) => {
          response.setHeader('Cache-Control', 'public, max-age=300');
          response.sendFile(path.join(context.corpus.publicDir, 'concepts.json'));
        },
      },
    })),
  ];
}
