/**
 * RFC 8288 links by which an agent that lands on the home page or the entry document finds
 * the machine-readable description (RFC 8631 service-desc) and the orientation text.
 */
import type { RequestHandler } from 'express';

export const DISCOVERY_LINK = '</openapi.json>; rel="service-desc"; type="application/vnd.oai.openapi+json", </llms.txt>; rel="describedby"; type="text/plain"';

const DISCOVERY_PATHS = new Set(['/', '/api/agent-entry']);

export const discoveryLinks: RequestHandler = (request, response, next) => {
  if ((request.method === 'GET' || request.method === 'HEAD') && DISCOVERY_PATHS.has(request.path)) response.setHeader('Link', DISCOVERY_LINK);
  next();
};
