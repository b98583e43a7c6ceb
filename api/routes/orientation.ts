import { agentEntry, health, info } from '../../core/orientation.ts';
import { AgentEntrySchema, HealthSchema, InfoSchema, ManifestSchema } from '../../schemas/api.ts';
import { CACHE_HEADER, DISCOVERY_LINK_HEADER, noParameters, ok } from '../openapi/parts.ts';
import { send, type RouteContext, type RouteDefinition, type RouteSpec } from './types.ts';

const tags = ['orientation'];

export const AGENT_ENTRY: RouteSpec = {
  path: '/api/agent-entry',
  operations: {
    GET: {
      operationId: 'getAgentEntry',
      tags,
      summary: 'Agent entry packet',
      description:
        'The intended first call for a client with no memory of the service. The Link header names this document (rel="service-desc") and /llms.txt (rel="describedby").',
      responses: { 200: ok('Agent entry packet (spec §2.9).', AgentEntrySchema, DISCOVERY_LINK_HEADER) },
      query: [],
      errors: noParameters,
    },
  },
};

export const HEALTH: RouteSpec = {
  path: '/api/health',
  operations: {
    GET: {
      operationId: 'getHealth',
      tags,
      summary: 'Health and wired capabilities',
      description:
        'Reports which call-paths are wired on this deployment (deliberation, council and persistence depend on deployment keys), as booleans in `capabilities`. Not cached.',
      responses: { 200: ok('Health object (spec §2.9).', HealthSchema) },
      query: [],
      errors: noParameters,
    },
  },
};

export const MANIFEST: RouteSpec = {
  path: '/api/manifest',
  operations: {
    GET: {
      operationId: 'getManifest',
      tags,
      summary: 'Manifest: the single source of truth for counts',
      responses: { 200: ok('Manifest (spec §2.8).', ManifestSchema) },
      query: [],
      errors: noParameters,
    },
  },
};

export const INFO: RouteSpec = {
  path: '/api/info',
  operations: {
    GET: {
      operationId: 'getInfo',
      tags,
      summary: 'Corpus, concept graph, glyphs and links',
      description: 'No model call; cacheable for 5 minutes.',
      responses: { 200: ok('Info object (spec §2.9).', InfoSchema, CACHE_HEADER) },
      query: [],
      errors: noParameters,
    },
  },
};

export function orientationRoutes(context: RouteContext): RouteDefinition[] {
  return [
    {
      ...AGENT_ENTRY,
      methods: {
        GET: (_request, response) => {
          send(response, AgentEntrySchema, agentEntry(context.corpus, context.capabilities));
        },
      },
    },
    {
      ...HEALTH,
      methods: {
        GET: (_request, response) => {
          response.setHeader('Cache-Control', 'no-store');
          send(response, HealthSchema, health(context.corpus, context.capabilities, context.now()));
        },
      },
    },
    {
      ...MANIFEST,
      methods: {
        GET: (_request, response) => {
          send(response, ManifestSchema, context.corpus.manifest);
        },
      },
    },
    {
      ...INFO,
      methods: {
        GET: (_request, response) => {
          response.setHeader('Cache-Control', 'public, max-age=300');
          send(response, InfoSchema, info(context.corpus));
        },
      },
    },
  ];
}
