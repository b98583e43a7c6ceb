/**
 * What `curate list` shows: its options read into a store query (filters and paging run in
 * the database), and a page of contributions as text for a person or JSON for a program.
 */
import type { ContributionKind, ContributionPage, ContributionQuery, ContributionRecord, ContributionStatus } from '../../storage/store.ts';

export const DEFAULT_LIST_LIMIT = 50;
const STATUSES: readonly ContributionStatus[] = ['pending', 'approved', 'rejected'];
const KINDS: readonly ContributionKind[] = ['answer', 'proposal'];

/** A mistake in the command line: the CLI prints it with the usage and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface ListOptions {
  status?: string;
  kind?: string;
  record?: string;
  client?: string;
  limit?: string;
  offset?: string;
}

function count(name: string, value: string, min: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(
      `--${name} must be a whole number${min > 0 ? ` of at least ${min}` : ''}${name === 'limit' ? ' or "all"' : ''}, not ${JSON.stringify(value)}`,
    );
  }
  return Number(value);
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}, not ${JSON.stringify(value)}`);
  return value as T;
}

function nonEmpty(name: string, value: string): string {
  if (value.trim() === '') throw new UsageError(`--${name} must not be empty`);
  return value;
}

/** The store query for `list`: pending items by default, --status all for every status, 50 a page. */
export function listQuery(options: ListOptions): ContributionQuery {
  const status = options.status ?? 'pending';
  return {
    ...(status === 'all' ? {} : { status: oneOf('status', status, STATUSES) }),
    ...(options.kind !== undefined ? { kind: oneOf('kind', options.kind, KINDS) } : {}),
    ...(options.record !== undefined ? { record_id: nonEmpty('record', options.record) } : {}),
    ...(options.client !== undefined ? { client: nonEmpty('client', options.client) } : {}),
    ...(options.limit === 'all' ? {} : { limit: count('limit', options.limit ?? String(DEFAULT_LIST_LIMIT), 1) }),
    offset: count('offset', options.offset ?? '0', 0),
  };
}

/** The offset of the page after this one, or null on the last page. */
export function nextOffset(query: ContributionQuery, page: ContributionPage): number | null {
  const end = (query.offset ?? 0) + page.items.length;
  return page.items.length > 0 && end < page.total ? end : null;
}

/** `list --json`: one JSON document, the page and how to get the next one. */
export function pageJson(query: ContributionQuery, page: ContributionPage): string {
  return JSON.stringify({
    total: page.total,
    offset: query.offset ?? 0,
    limit: query.limit ?? null,
    count: page.items.length,
    next_offset: nextOffset(query, page),
    items: page.items,
  });
}

function filtersText(query: ContributionQuery): string {
  const filters = [query.kind && `kind ${query.kind}`, query.record_id && `record ${query.record_id}`, query.client && `client ${query.client}`].filter(
    Boolean,
  );
  return filters.length > 0 ? ` matching ${filters.join(', ')}` : '';
}

/** The line above a text page: which items of how many, and where the next page starts. */
export function pageHeader(query: ContributionQuery, page: ContributionPage): string {
  const what = `${query.status ?? 'all'} contributions${filtersText(query)}`;
  if (page.total === 0) return `no ${what}`;
  const offset = query.offset ?? 0;
  if (page.items.length === 0) return `${page.total} ${what}; none from offset ${offset}`;
  const next = nextOffset(query, page);
  return `${what}: ${offset + 1}-${offset + page.items.length} of ${page.total}${next === null ? '' : ` (next page: --offset ${next})`}`;
}

/** Where an answer's Atlas record stands, for the curator's context. */
export interface RecordContext {
  id: string;
  question: string;
  voices: string[];
}

export function describeContribution(item: ContributionRecord, record: RecordContext | undefined, full: boolean): string {
  const text = item.kind === 'answer' ? String(item.payload.answer) : `${String(item.payload.title)}\n${String(item.payload.text)}`;
  const lines = [
    `${item.id}  ${item.kind}  ${item.status}  ${item.created_at}`,
    `  identity: ${item.identity}${item.justification ? `   justification: ${item.justification}` : ''}   client: ${item.client}`,
    ...(record
      ? [`  record: ${record.id}: ${record.question}`, `  voices already there: ${record.voices.join(', ')}`]
      : item.record_id
        ? [`  record: ${item.record_id} (not in the content folder)`]
        : []),
    ...(item.kind === 'proposal'
      ? [`  sources: ${((item.payload.sources as string[]) ?? []).join(', ') || '(none)'}   evidence: ${String(item.payload.evidence)}`]
      : []),
    `  text: ${full ? `\n${text}` : `${text.slice(0, 200).replace(/\s+/g, ' ')}${text.length > 200 ? '…' : ''}`}`,
    ...item.reviews.map((review) => `  vote by ${review.reviewer}: ${review.vote ?? 'none'}: ${review.reason}`),
    ...(item.reason && item.status !== 'pending' ? [`  ${item.status} by ${item.reviewer}: ${item.reason}`] : []),
  ];
  return lines.join('\n');
}
