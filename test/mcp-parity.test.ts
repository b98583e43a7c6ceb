/**
 * MCP parity (issue 29 item 2): each live tool takes what its HTTP route takes. The HTTP
 * side is read from the route table (query parameters, request body fields) and the tool
 * side from the tools' input schemas; every HTTP field is either a tool input (under its
 * own name or a named alias) or listed here as deliberately not exposed, with the reason.
 * A field added to one side only fails this test.
 */
import { describe, expect, it } from 'vitest';
import { councilInput } from '../api/mcp/tools/council.ts';
import { deliberateInput } from '../api/mcp/tools/deliberate.ts';
import { liveJobShape } from '../api/mcp/jobs.ts';
import { COUNCIL, TRACE } from '../api/routes/live.ts';
import type { RouteSpec } from '../api/routes/types.ts';
import { QueryRequestSchema } from '../schemas/api.ts';

/** Fields of the tools that only the job protocol has (submit with q, poll with job_id, wait). */
const JOB_PROTOCOL = ['job_id', 'wait_seconds'];

interface Pair {
  tool: string;
  toolFields: string[];
  httpFields: string[];
  /** HTTP field → tool field, where the names differ. */
  aliases: Record<string, string>;
  /** HTTP fields the tool does not take, each with why. */
  notExposed: Record<string, string>;
}

const queryNames = (spec: RouteSpec, method: 'GET' | 'POST') => (spec.operations[method]?.query ?? []).map((parameter) => parameter.name);

const pairs: Pair[] = [
  {
    tool: 'deliberate',
    toolFields: Object.keys(deliberateInput),
    httpFields: Object.keys(QueryRequestSchema.shape),
    aliases: { query: 'q', syntheticIdentity: 'identity' },
    notExposed: { async: 'the tool always submits a background job and polls it (job_id, wait_seconds)' },
  },
  {
    tool: 'council',
    toolFields: Object.keys(councilInput),
    httpFields: queryNames(COUNCIL, 'GET'),
    aliases: {},
    notExposed: { async: 'the tool always submits a background job and polls it (job_id, wait_seconds)' },
  },
  {
    tool: 'trace',
    toolFields: Object.keys(liveJobShape),
    httpFields: queryNames(TRACE, 'GET'),
    aliases: {},
    notExposed: { async: 'the tool always submits a background job and polls it (job_id, wait_seconds)' },
  },
];

describe('MCP live tools take what the HTTP live routes take', () => {
  it('the HTTP sides are read from the route table (not empty, so the comparison means something)', () => {
    for (const pair of pairs) expect(pair.httpFields.length, pair.tool).toBeGreaterThan(1);
    expect(queryNames(COUNCIL, 'GET')).toContain('second_round');
    expect(Object.keys(QueryRequestSchema.shape)).toContain('second_round');
  });

  it.each(pairs)('$tool: every HTTP field is a tool input or deliberately not exposed, and no tool input lacks an HTTP field', (pair) => {
    const missing = pair.httpFields.filter((field) => !(field in pair.notExposed) && !pair.toolFields.includes(pair.aliases[field] ?? field));
    expect(missing, `HTTP fields the ${pair.tool} tool lacks`).toEqual([]);

    const mapped = new Set(pair.httpFields.map((field) => pair.aliases[field] ?? field));
    const extra = pair.toolFields.filter((field) => !mapped.has(field) && !JOB_PROTOCOL.includes(field));
    expect(extra, `${pair.tool} tool inputs with no HTTP field`).toEqual([]);

    // A stale exclusion or alias (the HTTP field is gone) fails too.
    for (const field of [...Object.keys(pair.notExposed), ...Object.keys(pair.aliases)]) expect(pair.httpFields, pair.tool).toContain(field);
  });

  it('council persistence (POST body council_id, persist) stays off MCP on purpose: it needs the ingestion secret', () => {
    const body = COUNCIL.operations.POST?.body?.schema as { shape?: Record<string, unknown> } | undefined;
    const postFields = Object.keys(body?.shape ?? {});
    expect(postFields).toEqual(expect.arrayContaining(['q', 'second_round', 'council_id', 'persist']));
    const toolFields = Object.keys(councilInput);
    expect(toolFields).not.toContain('persist');
    expect(toolFields).not.toContain('council_id');
    // Everything else the POST body takes (q, question alias, second_round) the tool takes.
    const rest = postFields.filter((field) => !['council_id', 'persist', 'question'].includes(field));
    expect(rest.filter((field) => !toolFields.includes(field))).toEqual([]);
  });
});
