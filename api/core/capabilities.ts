/** What this deployment has wired, reported truthfully by /api/health (spec §4.1). */
export interface Capabilities {
  retrieval: boolean;
  atlas: boolean;
  atlas_search: boolean;
  kin: boolean;
  tensions: boolean;
  deliberation: boolean;
  council: boolean;
  council_persist: boolean;
  trace: boolean;
  jobs: boolean;
  sessions: boolean;
  contributions: boolean;
  proposals: boolean;
  invite: boolean;
  play: boolean;
  mcp: boolean;
  site: boolean;
}

export const WHAT_EACH_CAPABILITY_COVERS: Record<keyof Capabilities, string> = {
  retrieval: 'GET /api/query fast path and mode=retrieve',
  atlas: 'GET /api/divergences',
  atlas_search: 'GET /api/divergences/search',
  kin: 'GET /api/kin',
  tensions: 'GET /api/tensions',
  deliberation: 'full deliberation: sync=1, async=1, job=, POST /api/query',
  council: 'GET /api/council (live panel)',
  council_persist: 'POST /api/council with persist true',
  trace: 'GET /api/trace and mode=trace',
  jobs: 'background jobs and polling',
  sessions: 'session_id threading on POST /api/query',
  contributions: 'POST /api/contribute',
  proposals: "POST /api/store with action 'propose'",
  invite: 'GET /api/invite',
  play: 'GET /api/play',
  mcp: 'POST /api/mcp',
  site: 'the static site for people at /',
};
