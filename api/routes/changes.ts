/**
 * GET /api/changes?since=<corpus_rev>: what changed in the content from a revision a reader holds
 * to the current one (issue 45, docs/CHANGES.md), from the history the build read from git. The
 * one API answer with a validator: the same delta has the same ETag, and If-None-Match → 304.
 */
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { changesSince } from '../../core/changes.ts';
import { ChangesDeltaSchema, CORPUS_REV_PATTERN, type ChangeHistory } from '../../schemas/api/changes.ts';
import { apiError } from '../../schemas/errors.ts';
import { changeHistoryOf } from '../changes-file.ts';
import { ok, queryParameter } from '../openapi/parts.ts';
import { queryOf, send, type Json, type RouteContext, type RouteDefinition, type RouteSpec } from './types.ts';

export const CHANGES_PATH = '/api/changes';

const CHANGES_QUERY = [
  queryParameter(
    'since',
    z.string().regex(CORPUS_REV_PATTERN),
    "The corpus revision you hold: manifest.published_releases.corpus_rev of an earlier read (16 lower-case hex digits), or a revision of /changes/index.json's pages.",
    { required: true, trim: true, example: '0123456789abcdef' },
  ),
] as const;

const ETAG: Json = {
  ETag: { description: 'Names this answer; send it back in If-None-Match to get 304 while nothing changed.', required: true, schema: { type: 'string' } },
};

export const CHANGES: RouteSpec = {
  path: CHANGES_PATH,
  operations: {
    GET: {
      operationId: 'changes',
      tags: ['changes'],
      summary: 'What changed in the content since a revision',
      description:
        'The delta from since to the current revision (manifest.published_releases.corpus_rev): the revisions in between, newest first (commit, date, author, subject), and the records added, changed and removed across them, each with id, kind, content hash and the fields that changed (tier, answers and annotations appended, dispositions appended), collapsed per record. since equal to the current revision answers up_to_date: true with nothing to apply. A revision the history does not hold is 404 REVISION_NOT_FOUND naming the oldest it holds; a deployment built without git history answers 404 HISTORY_UNAVAILABLE for any earlier revision rather than guessing. Carries an ETag; If-None-Match with it answers 304. The same revisions, whole and paged, are static files: /changes/index.json.',
      query: CHANGES_QUERY,
      responses: {
        200: ok('The delta from since to the current revision.', ChangesDeltaSchema, {
          ...ETAG,
          'Cache-Control': { description: 'no-cache: revalidate with If-None-Match (a 304 costs nothing).', schema: { type: 'string' } },
        }),
        304: { description: 'Not modified: If-None-Match named the ETag of this answer.', headers: ETAG },
      },
      errors: { 400: ['PARAM_MISSING', 'INVALID_PARAMETER', 'UNKNOWN_PARAMETER', 'PARAM_REPEATED'], 404: ['REVISION_NOT_FOUND', 'HISTORY_UNAVAILABLE'] },
    },
  },
};

/** If-None-Match compared weakly (RFC 9110 §13.1.2): the compressed answer's W/ form names the same delta. */
function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const strip = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || strip(tag) === strip(etag));
}

function unknownRevision(since: string, history: ChangeHistory) {
  const oldest = history.oldest_rev;
  return apiError(
    'REVISION_NOT_FOUND',
    `corpus revision ${since} is not in this deployment's history; the oldest it holds is ${oldest} (history ${history.history}${history.reason ? `: ${history.reason}` : ''})`,
    `Your copy is older than ${oldest} or comes from another deployment: read /records.json and GET /api/manifest whole, keep manifest.published_releases.corpus_rev (now ${history.current_rev}), and follow from there with GET /api/changes?since=<it>.`,
    {
      suggestedNextCall: { method: 'GET', path: '/api/manifest' },
      details: { since, oldest_rev: oldest, current_rev: history.current_rev, history: history.history, revisions: history.revisions.length },
    },
  );
}

function historyUnavailable(since: string, history: ChangeHistory) {
  return apiError(
    'HISTORY_UNAVAILABLE',
    `this deployment was built without git history of its content (${history.reason}), so it cannot tell what changed since ${since}`,
    `Read /records.json and GET /api/manifest whole; compare content hashes (/records/<id>.md) with your copy if you need the difference. The current revision is ${history.current_rev}.`,
    {
      suggestedNextCall: { method: 'GET', path: '/api/manifest' },
      details: { since, current_rev: history.current_rev, history: 'unavailable', reason: history.reason },
    },
  );
}

export function changeRoutes(context: RouteContext): RouteDefinition[] {
  return [
    {
      ...CHANGES,
      methods: {
        GET: (request: Request, response: Response, input) => {
          const { since } = queryOf(input, CHANGES_QUERY);
          // Read once, on first use: the artifacts, and so the history, are fixed for the process's life.
          const history = changeHistoryOf(context.corpus);
          const outcome = changesSince(history, since);
          if (outcome.kind === 'unknown-revision') throw unknownRevision(since, history);
          if (outcome.kind === 'history-unavailable') throw historyUnavailable(since, history);
          const etag = `"${createHash('sha256').update(JSON.stringify(outcome.delta)).digest('base64url').slice(0, 27)}"`;
          response.setHeader('ETag', etag);
          response.setHeader('Cache-Control', 'no-cache');
          if (matches(request.headers['if-none-match'], etag)) {
            response.status(304).end();
            return;
          }
          send(response, ChangesDeltaSchema, outcome.delta);
        },
      },
    },
  ];
}
