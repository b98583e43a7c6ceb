/**
 * The one SQL statement both drivers run for a filtered page of contributions: the page and
 * the count of every match, read together so that they agree. The count sits in a one-row
 * subquery and the page is joined to it, so a page past the end still carries the total.
 */
import type { ContributionQuery } from './contributions.ts';

const FILTERS = ['status', 'kind', 'record_id', 'client'] as const;

export interface PageStatement {
  sql: string;
  params: unknown[];
}

/**
 * `placeholder(n)` spells the n-th (1-based) numbered parameter of the driver (`?1`, `$1`),
 * so each filter value is bound once and used in both subqueries; `unlimited` is the LIMIT
 * value meaning "no limit" (-1 in SQLite, NULL in PostgreSQL).
 */
export function contributionPageStatement(
  columns: string,
  query: ContributionQuery,
  placeholder: (index: number) => string,
  unlimited: number | null,
): PageStatement {
  const params: unknown[] = [];
  const bind = (value: unknown) => {
    params.push(value);
    return placeholder(params.length);
  };
  const clauses: string[] = [];
  for (const filter of FILTERS) {
    const value = query[filter];
    if (value !== undefined) clauses.push(`${filter} = ${bind(value)}`);
  }
  const where = clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '';
  const limit = bind(query.limit ?? unlimited);
  const offset = bind(query.offset ?? 0);
  const sql = `SELECT counted.total AS total, page.* FROM (SELECT COUNT(*) AS total FROM contributions ${where}) AS counted
    LEFT JOIN (SELECT ${columns} FROM contributions ${where} ORDER BY created_at, id LIMIT ${limit} OFFSET ${offset}) AS page ON 1 = 1
    ORDER BY page.created_at, page.id`;
  return { sql, params };
}
