/** Static documents whose answer depends on the deployment (the concept index, the interface description). */
import path from 'node:path';
import { ConceptIndexSchema, OpenApiDocumentSchema } from '../../schemas/api.ts';
import { createOpenApiDocument } from '../openapi.ts';
import { CACHE_HEADER, ok } from '../openapi/parts.ts';
import type { Json, RouteContext, RouteDefinition, RouteSpec } from './types.ts';

const tags = ['static'];

export const OPENAPI: RouteSpec = {
  path: '/openapi.json',
  operations: {
    GET: {
      operationId: 'getOpenApi',
      tags,
      summary: 'This interface description',
      responses: { 200: ok('OpenAPI 3.1.0 document.', OpenApiDocumentSchema, CACHE_HEADER) },
    },
  },
};

// The concept index (spec §4.9 /concepts/) is also a plain file at /concepts.json.
export const CONCEPT_INDEX: RouteSpec = {
  path: '/concepts/',
  operations: {
    GET: {
      operationId: 'getConceptIndex',
      tags,
      summary: 'Concept index: canonical concept cards with a fixed schema',
      responses: { 200: ok('Concept index.', ConceptIndexSchema) },
    },
  },
};

export const CONCEPT_INDEX_NO_SLASH: RouteSpec = {
  path: '/concepts',
  operations: {
    GET: {
      operationId: 'getConceptIndexNoSlash',
      tags,
      summary: 'Concept index (same as /concepts/)',
      responses: { 200: ok('Concept index.', ConceptIndexSchema) },
    },
  },
};

/** table: the app's whole route table, read once on the first request for /openapi.json. */
export function staticRoutes(context: RouteContext, table: () => readonly RouteSpec[]): RouteDefinition[] {
  const { site } = context.corpus;
  // Built once per app: the document depends only on the route table and the deployment's name, slug and id prefix.
  let openApi: Json | undefined;
  return [
    {
      ...OPENAPI,
      methods: {
        GET: (_request, response) => {
          openApi ??= createOpenApiDocument({ siteName: site.name, siteSlug: site.slug, idPrefix: site.id_prefix }, table());
          response.setHeader('Cache-Control', 'public, max-age=300');
          response.json(openApi);
        },
      },
    },
    ...[CONCEPT_INDEX, CONCEPT_INDEX_NO_SLASH].map((spec): RouteDefinition => ({
      ...spec,
      methods: {
        GET: (_request, response) => {
          response.setHeader('Cache-Control', 'public, max-age=300');
          response.sendFile(path.join(context.corpus.publicDir, 'concepts.json'));
        },
      },
    })),
  ];
}
