/** info: the agent entry packet, health capabilities and manifest counts in one call. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { errorFromResponse, guarded, isObject, successResult, type JsonObject } from '../results.ts';
import type { ToolDeps } from '../types.ts';

const SECTIONS = ['agent_entry', 'health', 'manifest'] as const;
const PATHS: Record<(typeof SECTIONS)[number], string> = { agent_entry: '/api/agent-entry', health: '/api/health', manifest: '/api/manifest' };

export const infoInput = {
  sections: z
    .array(z.enum(SECTIONS))
    .min(1)
    .optional()
    .describe(
      'Which parts to return (default all): agent_entry (what the service is, trust rules, citation), health (which capabilities are wired here), manifest (counts and hashes).',
    ),
};

export function registerInfoTool(server: McpServer, deps: ToolDeps): void {
  server.registerTool(
    'info',
    {
      title: 'Service info: orientation, capabilities, counts',
      description:
        'The first call for a client with no memory of the service: what it is and when to use it, the trust rules, which capabilities this deployment has wired ' +
        '(deliberation, council and trace need a live panel), and the manifest counts (the single source of truth for numbers). Free, no model call.',
      inputSchema: infoInput,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (input, extra) =>
      guarded(async () => {
        const sections = [...new Set(input.sections ?? SECTIONS)];
        const body: JsonObject = {};
        for (const section of sections) {
          const response = await deps.call({ method: 'GET', path: PATHS[section] }, extra.signal);
          if (response.status !== 200) return errorFromResponse(response);
          body[section] = response.body;
        }
        return successResult(summarizeInfo(body), body);
      }),
  );
}

function summarizeInfo(body: JsonObject): string {
  const lines: string[] = [];
  const entry = isObject(body.agent_entry) ? body.agent_entry : undefined;
  if (entry)
    lines.push(
      `${String(entry.name)}: ${String(entry.one_line)}`,
      `Trust boundary: ${typeof entry.trust_boundary === 'string' ? entry.trust_boundary : JSON.stringify(entry.trust_boundary)}`,
    );
  const health = isObject(body.health) ? body.health : undefined;
  if (health) {
    const capabilities = isObject(health.capabilities) ? health.capabilities : {};
    const wired = Object.entries(capabilities)
      .filter(([, on]) => on === true)
      .map(([name]) => name);
    const missing = Object.entries(capabilities)
      .filter(([, on]) => on === false)
      .map(([name]) => name);
    lines.push(
      `Health: ${String(health.status)}, version ${String(health.version)}. Wired: ${wired.join(', ') || 'none'}.${missing.length > 0 ? ` Not wired: ${missing.join(', ')}.` : ''}`,
    );
  }
  const manifest = isObject(body.manifest) ? body.manifest : undefined;
  const counts = manifest && isObject(manifest.counts) ? manifest.counts : undefined;
  if (counts) {
    const corpus = isObject(counts.corpus) ? counts.corpus : {};
    const atlas = isObject(counts.atlas) ? counts.atlas : {};
    lines.push(
      `Manifest ${String(manifest!.manifest_version)}: ${String(corpus.total_works)} corpus works, ${String(atlas.live_records)} Atlas records (counts are computed live; the manifest is the source of truth).`,
    );
  }
  lines.push(
    'Tools: fast_context (free retrieval, start here), read_divergences, kin, info, changes (what changed since manifest.published_releases.corpus_rev); deliberate, trace, council (live panel, cost money); contribute (the only write, lands pending).',
  );
  return lines.join('\n');
}
