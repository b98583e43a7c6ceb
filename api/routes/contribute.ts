/** POST /api/contribute, POST /api/store, GET /api/invite, GET and POST /api/play (spec §4.8). */
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { nearestIds } from '../../core/atlas.ts';
import { mendContribution, mendProposal } from '../../core/examples.ts';
import {
  ContributeBodySchema,
  contentHash,
  invitation,
  JUSTIFICATIONS,
  JUSTIFICATION_VALUES,
  otherMinds,
  ProposeBodySchema,
  type Justification,
} from '../../core/contributions.ts';
import { apiError, type SuggestedCall } from '../../schemas/errors.ts';
import { answerOnce } from '../http/idempotency.ts';
import { rateLimited, setRateHeaders, type Limiter, type RateLimits } from '../http/rate-limit.ts';
import type { ContributionRecord, RateLimit, Store, SubmitOutcome } from '../../storage/store.ts';
import { bodyOf, queryOf, send, type RouteContext, type RouteDefinition } from './types.ts';
import type { Corpus } from '../load-artifacts.ts';
import {
  ContributeRequestSchema,
  ContributionAcceptedSchema,
  InvalidJustificationErrorSchema,
  InvitationSchema,
  PlayCountsSchema,
  PlayRecordedSchema,
  PlayRequestSchema,
  ProposalAcceptedSchema,
  StoreRequestSchema,
} from '../../schemas/api.ts';
import { MAX_IDENTITY_CHARS } from './kin.ts';
import { keyed, ok, queryParameter, RATE_HEADERS, storeDown, noParameters, SUBMISSION_HEADERS } from '../openapi/parts.ts';
import type { RouteSpec } from './types.ts';

const tags = ['contribution'];
const KEY_NOTE =
  'An Idempotency-Key is scoped to this client and this operation: the same request again with it gets the first answer byte for byte (Idempotent-Replayed: true), a different request with it 422 IDEMPOTENCY_KEY_REUSED.';

export const CONTRIBUTE: RouteSpec = {
  path: '/api/contribute',
  operations: {
    POST: {
      operationId: 'contribute',
      tags,
      summary: 'Answer an open Atlas question; lands as pending',
      description: `The answer is stored as pending (invisible to retrieval, the Atlas, kin and prompts until a curator approves it), and the response returns the other minds' answers to the same question. Needs no key; rate-limited per client. ${KEY_NOTE}`,
      idempotencyKey: true,
      body: { schema: ContributeRequestSchema, description: 'The answer (spec §4.8).', required: true },
      responses: { 202: ok('Stored as pending.', ContributionAcceptedSchema, SUBMISSION_HEADERS) },
      errors: { 400: ['INVALID_BODY', 'INVALID_JUSTIFICATION', 'INVALID_PARAMETER'], 404: ['RECORD_NOT_FOUND'], 429: ['RATE_LIMITED'], ...storeDown, ...keyed },
      invalidJustification: InvalidJustificationErrorSchema,
    },
  },
};

export const STORE: RouteSpec = {
  path: '/api/store',
  operations: {
    POST: {
      operationId: 'store',
      tags,
      summary: 'Propose a synthesis; lands as pending',
      description: `Published only after curator review; approved proposals join the corpus works count. Needs no key; rate-limited per client. ${KEY_NOTE}`,
      idempotencyKey: true,
      body: { schema: StoreRequestSchema, description: 'The proposal (spec §4.8).', required: true },
      responses: { 202: ok('Stored as pending.', ProposalAcceptedSchema, SUBMISSION_HEADERS) },
      errors: { 400: ['UNKNOWN_ACTION', 'INVALID_BODY', 'UNKNOWN_SOURCE', 'INVALID_PARAMETER'], 429: ['RATE_LIMITED'], ...storeDown, ...keyed },
    },
  },
};

const INVITE_QUERY = [
  queryParameter('for', z.string().min(1).max(MAX_IDENTITY_CHARS), 'A peer model name.', { required: true, example: 'your-model-name', trim: true }),
] as const;

export const INVITE: RouteSpec = {
  path: '/api/invite',
  operations: {
    GET: {
      operationId: 'invite',
      tags,
      summary: 'A self-contained invitation for another mind',
      description: 'An open question where that voice is missing, plus the exact call to make. Identity is declared, never verified.',
      query: INVITE_QUERY,
      responses: { 200: ok('Invitation.', InvitationSchema) },
      errors: { 400: ['PARAM_MISSING', 'INVALID_PARAMETER', 'UNKNOWN_PARAMETER', 'PARAM_REPEATED'] },
    },
  },
};

export const PLAY: RouteSpec = {
  path: '/api/play',
  operations: {
    GET: {
      operationId: 'playCounts',
      tags,
      summary: 'Which audio tracks the community returns to',
      query: [],
      description: 'Not cached. Client addresses are hashed with a per-deployment secret; no raw address is stored.',
      responses: { 200: ok('Play counts per track.', PlayCountsSchema) },
      errors: { ...noParameters, ...storeDown },
    },
    POST: {
      operationId: 'recordPlay',
      tags,
      summary: 'Record one play of a track',
      description: 'A play counts once per track, client and day. Rate-limited per client.',
      body: { schema: PlayRequestSchema, description: 'The track.', required: true },
      responses: { 202: ok('Play recorded (or already counted today).', PlayRecordedSchema, RATE_HEADERS) },
      errors: { 400: ['INVALID_BODY'], 404: ['TRACK_NOT_FOUND'], 429: ['RATE_LIMITED'], ...storeDown },
    },
  },
};

function reviewNote(kind: ContributionRecord['kind']): string {
  return `Your ${kind === 'answer' ? 'answer' : 'proposal'} is pending. It is invisible to retrieval, the Atlas, kin and every prompt until a curator (optionally helped by a multi-model review) approves it; approved items are published into the content repository with your declared identity, the date and your justification.`;
}

interface ContributeDeps {
  context: RouteContext;
  corpus: Corpus;
  store: Store;
  limiter: Limiter;
  limits: RateLimits;
}

export function contributeRoutes(context: RouteContext, store: Store, limiter: Limiter, limits: RateLimits): RouteDefinition[] {
  const deps: ContributeDeps = { context, corpus: context.corpus, store, limiter, limits };
  return [answerRoute(deps), proposeRoute(deps), inviteRoute(context.corpus), playRoute(deps)];
}

/** The same POST /api/play with the nearest slug (the first track if none is near); GET /api/play without tracks. */
function playCall(corpus: Corpus, wanted: unknown): SuggestedCall {
  const slugs = corpus.audio.tracks.map((candidate) => candidate.slug);
  const slug = (typeof wanted === 'string' ? nearestIds(wanted, slugs)[0] : undefined) ?? slugs[0];
  return slug ? { method: 'POST', path: '/api/play', body: { slug } } : { method: 'GET', path: '/api/play' };
}

/** Stores the item once per Idempotency-Key of this client and operation; 202 with what `build` says (typed by the schema, as send() does). */
async function submit<S extends z.ZodType>(
  { context, store, limits }: ContributeDeps,
  request: Request,
  response: Response,
  operation: 'contribute' | 'store',
  _schema: S,
  item: Parameters<Store['submitContribution']>[0],
  build: (outcome: Exclude<SubmitOutcome, { outcome: 'limited' }>) => z.output<S>,
) {
  const limit: RateLimit = { key: `contribute:${item.client}`, ...limits.contribute };
  await answerOnce(request, response, {
    store,
    now: context.now(),
    client: item.client,
    operation,
    request: request.body as unknown,
    resend: { method: 'POST', path: request.path, body: request.body as unknown },
    work: async () => {
      const outcome = await store.submitContribution(item, limit, context.now());
      if (outcome.outcome === 'limited') throw rateLimited(outcome.retryAfterMs, limit);
      if (outcome.outcome === 'created') setRateHeaders(response, limit, outcome.remaining, outcome.resetMs);
      return { status: 202, body: build(outcome) };
    },
  });
}

/** POST /api/contribute: an answer to an open Atlas record, held for review. */
function answerRoute(deps: ContributeDeps): RouteDefinition {
  const { limiter, corpus } = deps;
  return {
    ...CONTRIBUTE,
    // The justification is read as any string here: outside the vocabulary it has its own code.
    bodies: { POST: { schema: ContributeBodySchema, mend: (body) => mendContribution(corpus, body) } },
    methods: {
      POST: async (request, response, input) => {
        const body = bodyOf(input, ContributeBodySchema);
        if (!(JUSTIFICATION_VALUES as string[]).includes(body.justification)) {
          throw apiError(
            'INVALID_JUSTIFICATION',
            `"${body.justification}" is not a valid justification`,
            `Resend with justification set to one of: ${JUSTIFICATION_VALUES.join(', ')}.`,
            {
              details: { allowed: JUSTIFICATION_VALUES, meanings: JUSTIFICATIONS },
              extra: { valid_values: JUSTIFICATION_VALUES },
              suggestedNextCall: mendContribution(corpus, body),
            },
          );
        }
        const record = corpus.divergenceById.get(body.id);
        if (!record) {
          const nearest = nearestIds(body.id, [...corpus.divergenceById.keys()]);
          throw apiError(
            'RECORD_NOT_FOUND',
            `no divergence record has id "${body.id}"`,
            nearest.length > 0
              ? `Ids are case-sensitive. Did you mean ${nearest.join(' or ')}?`
              : 'Find an open question with GET /api/invite?for=<your model> or GET /api/divergences.',
            {
              suggestedNextCall: nearest[0]
                ? { method: 'GET', path: '/api/divergences', query: { id: nearest[0] } }
                : { method: 'GET', path: '/api/invite', query: { for: body.identity } },
              details: { requested_id: body.id, nearest_ids: nearest },
            },
          );
        }
        const client = await limiter.client(request);
        await submit(
          deps,
          request,
          response,
          'contribute',
          ContributionAcceptedSchema,
          {
            id: `ctb_${randomUUID()}`,
            kind: 'answer',
            record_id: record.id,
            identity: body.identity,
            justification: body.justification as Justification,
            payload: { answer: body.answer },
            content_hash: contentHash(['answer', record.id, body.identity, body.justification, body.answer]),
            idempotency_key: input.idempotencyKey,
            client,
          },
          (outcome) => ({
            contribution_id: outcome.contribution.id,
            status: outcome.contribution.status,
            record_id: record.id,
            question: record.question,
            received: {
              identity: outcome.contribution.identity,
              justification: outcome.contribution.justification ?? body.justification,
              answer_chars: String(outcome.contribution.payload.answer ?? '').length,
              at: outcome.contribution.created_at,
            },
            ...(outcome.outcome === 'duplicate' ? { duplicate: true as const } : {}),
            other_minds: otherMinds(record),
            review: reviewNote('answer'),
          }),
        );
      },
    },
  };
}

/** POST /api/store: a proposed synthesis citing records of the corpus, held for review. */
function proposeRoute(deps: ContributeDeps): RouteDefinition {
  const { limiter, corpus } = deps;
  return {
    ...STORE,
    bodies: {
      POST: {
        // The action is the first thing read: any other than propose has its own code.
        before: (request) => {
          const action = (request.body as { action?: unknown } | undefined)?.action;
          if (action !== 'propose') {
            throw apiError(
              'UNKNOWN_ACTION',
              `unknown action ${JSON.stringify(action ?? null)}`,
              'Send {"action": "propose", "title", "text", "identity", "sources"} to propose a synthesis.',
              { details: { allowed: ['propose'] }, suggestedNextCall: mendProposal(corpus, request.body) },
            );
          }
        },
        // With its defaults (sources [], evidence interpretive) applied.
        schema: ProposeBodySchema,
        mend: (body) => mendProposal(corpus, body),
      },
    },
    methods: {
      POST: async (request, response, input) => {
        const body = bodyOf(input, ProposeBodySchema);
        const unknown = body.sources.filter((id) => !corpus.workById.has(id) && !corpus.divergenceById.has(id));
        if (unknown.length > 0) {
          throw apiError(
            'UNKNOWN_SOURCE',
            `sources not in the corpus: ${unknown.join(', ')}`,
            'Cite existing record ids (case-sensitive); find them with GET /api/query?q=...',
            { details: { unknown }, suggestedNextCall: mendProposal(corpus, body) },
          );
        }
        const client = await limiter.client(request);
        await submit(
          deps,
          request,
          response,
          'store',
          ProposalAcceptedSchema,
          {
            id: `ctb_${randomUUID()}`,
            kind: 'proposal',
            record_id: null,
            identity: body.identity,
            justification: null,
            payload: { title: body.title, text: body.text, sources: body.sources, evidence: body.evidence, ...(body.note ? { note: body.note } : {}) },
            content_hash: contentHash(['proposal', body.identity, body.title, body.text]),
            idempotency_key: input.idempotencyKey,
            client,
          },
          (outcome) => ({
            contribution_id: outcome.contribution.id,
            status: outcome.contribution.status,
            action: 'propose' as const,
            received: {
              identity: body.identity,
              title: body.title,
              text_chars: body.text.length,
              sources: body.sources,
              at: outcome.contribution.created_at,
            },
            ...(outcome.outcome === 'duplicate' ? { duplicate: true as const } : {}),
            review: reviewNote('proposal'),
          }),
        );
      },
    },
  };
}

/** GET /api/invite: the open questions a model is invited to answer. */
function inviteRoute(corpus: Corpus): RouteDefinition {
  return {
    ...INVITE,
    methods: {
      GET: (_request, response, input) => {
        const { for: forModel } = queryOf(input, INVITE_QUERY);
        send(response, InvitationSchema, invitation(forModel, corpus.divergences, corpus.registry));
      },
    },
  };
}

/** GET and POST /api/play: play counts per track, one play per track, client and day. */
function playRoute(deps: ContributeDeps): RouteDefinition {
  const { context, store, limiter, limits, corpus } = deps;
  return {
    ...PLAY,
    bodies: { POST: { mend: (body) => playCall(corpus, (body as { slug?: unknown } | undefined)?.slug) } },
    methods: {
      GET: async (request, response) => {
        const counts = new Map((await store.playCounts()).map((row) => [row.slug, row]));
        const tracks = corpus.audio.tracks.map((track) => {
          const count = counts.get(track.slug);
          return {
            slug: track.slug,
            title: track.title,
            plays: count?.plays ?? 0,
            listeners: count?.listeners ?? 0,
            returning_listeners: count?.returning ?? 0,
          };
        });
        tracks.sort((a, b) => b.returning_listeners - a.returning_listeners || b.plays - a.plays || a.slug.localeCompare(b.slug));
        response.setHeader('Cache-Control', 'no-store');
        send(response, PlayCountsSchema, {
          tracks,
          total_plays: tracks.reduce((sum, track) => sum + track.plays, 0),
          ordering: 'By returning listeners (clients who played a track on more than one day), then plays.',
          counting: 'A play counts once per track, client and day. POST /api/play {"slug": "<track slug>"} records one (the site player does it).',
          privacy: 'Client addresses are hashed with a per-deployment secret and only the hash is kept; no raw address is stored.',
          manifest: '/audio/manifest.json',
        });
      },
      POST: async (request, response, input) => {
        const parsed = bodyOf(input, PlayRequestSchema);
        const slugs = corpus.audio.tracks.map((candidate) => candidate.slug);
        const track = corpus.audio.tracks.find((candidate) => candidate.slug === parsed.slug);
        if (!track) {
          throw apiError('TRACK_NOT_FOUND', `no audio track has slug "${parsed.slug}"`, 'Use a slug from /audio/manifest.json.', {
            details: { slugs },
            suggestedNextCall: playCall(corpus, parsed.slug),
          });
        }
        const client = await limiter.client(request);
        const limit: RateLimit = { key: `play:${client}`, ...limits.play };
        const verdict = await store.hit(limit, context.now());
        if (!verdict.allowed) throw rateLimited(verdict.resetMs, limit);
        setRateHeaders(response, limit, verdict.remaining, verdict.resetMs);
        const recorded = await store.recordPlay(track.slug, client, context.now().toISOString().slice(0, 10));
        send(response, PlayRecordedSchema, { slug: track.slug, recorded, note: recorded ? 'Play counted.' : 'Already counted for this client today.' }, 202);
      },
    },
  };
}
