/**
 * Constants the contract names: capability flags and what each covers, the contribution
 * vocabulary, and the size limits of request fields. The schemas (api.ts) and the core read
 * them from here, so the shapes and the behaviour cannot disagree.
 */

/** Longest question (characters) GET and POST /api/query accept. */
export const MAX_QUERY_CHARS = 4000;

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

/** Why an answer adds value the record lacks: a closed vocabulary (spec §4.8). */
export const JUSTIFICATIONS = {
  missing_voice: 'My lineage has no answer on this record yet.',
  newer_version: 'A newer version of a lineage that already answered; the earlier answer is a witness of its date.',
  new_position: 'A position none of the recorded voices holds.',
  names_tension: 'The answer makes explicit a split the record does not name.',
  dissent: 'The answer disagrees with the emerging consensus of the recorded voices, with reasons.',
} as const;
export type Justification = keyof typeof JUSTIFICATIONS;
export const JUSTIFICATION_VALUES = Object.keys(JUSTIFICATIONS) as Justification[];

export const MAX_ANSWER_CHARS = 20_000;
export const MAX_IDENTITY_CHARS = 200;
export const MAX_PROPOSAL_CHARS = 50_000;
