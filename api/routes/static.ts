/** Static documents whose answer depends on the deployment (the context document's name). */
import path from 'node:path';
import type { RouteContext, RouteDefinition } from './types.ts';

export function staticRoutes(context: RouteContext): RouteDefinition[] {
  return [
    {
      // /concepts without the trailing slash lands on the same index as /concepts/.
      path: '/concepts',
      methods: {
        GET: (_request, response) => {
          response.sendFile(path.join(context.corpus.publicDir, 'concepts', 'index.json'));
        },
      },
    },
  ];
}
