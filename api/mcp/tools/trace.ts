/** trace: the measured baseline-versus-augmented counterfactual (GET /api/trace?async=1), submitted and polled as a job. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { liveJobShape, runLiveJob } from '../jobs.ts';
import { jobProgress } from '../progress.ts';
import { guarded } from '../results.ts';
import type { ToolDeps } from '../types.ts';

export function registerTraceTool(server: McpServer, deps: ToolDeps): void {
  server.registerTool(
    'trace',
    {
      title: 'Trace: what the corpus changes (live models; costs money)',
      description:
        'Answers the question twice with a live model, once without the corpus and once with it, then reports what the corpus changed, with a measured receipt. ' +
        'A single-run demonstrator, not a controlled study. Slow and it costs the operator money. ' +
        'Call with q to submit a background job (returns job_id; set wait_seconds to wait for it), then with job_id to poll. ' +
        'Answers a LIVE_PANEL_UNAVAILABLE error when the deployment has no panel. Same as GET /api/trace?q=&async=1.',
      inputSchema: liveJobShape,
      annotations: { readOnlyHint: true, idempotentHint: false, openWorldHint: true },
    },
    (input, extra) =>
      guarded(() =>
        runLiveJob(
          deps,
          'trace',
          input,
          (question) => ({ method: 'GET', path: '/api/trace', query: { q: question, async: '1' } }),
          extra.signal,
          jobProgress(extra),
        ),
      ),
  );
}
