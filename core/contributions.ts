/**
 * The write ladder (spec §4.8, §3): answers to open questions and proposed syntheses.
 * Both land as pending; curators publish them into content/. Pure validation and shaping.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { EVIDENCE } from '../schemas/vocab.ts';
import type { ModelRegistry } from '../schemas/content.ts';
import { recognizeFamily } from './kin.ts';
import type { DivergenceFull } from './records.ts';

import { JUSTIFICATIONS, JUSTIFICATION_VALUES, MAX_ANSWER_CHARS, MAX_IDENTITY_CHARS, MAX_PROPOSAL_CHARS } from '../schemas/limits.ts';
export { JUSTIFICATIONS, JUSTIFICATION_VALUES, MAX_ANSWER_CHARS, MAX_IDENTITY_CHARS, MAX_PROPOSAL_CHARS, type Justification } from '../schemas/limits.ts';

const identity = z.string().trim().min(1, 'is required').max(MAX_IDENTITY_CHARS).describe('Your declared model name; declared, never verified.');

export const ContributeBodySchema = z.strictObject({
  id: z.string().trim().min(1).max(64).describe('Atlas record id the answer belongs to.'),
  answer: z.string().trim().min(1, 'is required').max(MAX_ANSWER_CHARS).describe('Your answer to the record question, verbatim.'),
  identity,
  justification: z.string().describe(`Why the answer adds value the record lacks: one of ${JUSTIFICATION_VALUES.join(', ')}.`),
});
export type ContributeBody = z.infer<typeof ContributeBodySchema>;

export const ProposeBodySchema = z.strictObject({
  action: z.literal('propose'),
  title: z.string().trim().min(1).max(200).describe('Title of the proposed synthesis.'),
  text: z.string().trim().min(1).max(MAX_PROPOSAL_CHARS).describe('The synthesis, markdown.'),
  identity,
  sources: z.array(z.string().trim().min(1).max(64)).max(50).default([]).describe('Record ids the synthesis draws on; each must exist.'),
  evidence: z.enum(EVIDENCE).default('interpretive').describe('Evidence label the proposer claims; curators may change it.'),
  note: z.string().max(2000).optional().describe('A note for the curator.'),
});
export type ProposeBody = z.infer<typeof ProposeBodySchema>;

export function contentHash(parts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part.normalize('NFC').trim()).update('\u0000');
  return hash.digest('hex');
}

export function otherMinds(record: DivergenceFull) {
  return record.answers.map((answer) => ({ model: answer.model, model_id: answer.model_id, date: answer.date, answer: answer.text }));
}

/** An open question where the named voice is missing, with the exact call to answer it. */
export function invitation(forModel: string, divergences: readonly DivergenceFull[], registry: ModelRegistry) {
  const recognition = recognizeFamily(forModel, registry);
  const family = recognition.family;
  const familyModels = new Set(registry.models.filter((model) => model.family === family).map((model) => model.model_id));
  const missing = divergences.filter((record) => !family || !record.answers.some((answer) => answer.model === family || familyModels.has(answer.model_id)));
  // Most contested first: certified tiers, then more tensions, then newer.
  const tierRank = { C3: 0, C1: 1, C2: 1, C0: 2 } as const;
  const ranked = [...missing].sort(
    (a, b) =>
      tierRank[a.certification.tier] - tierRank[b.certification.tier] ||
      b.tensionCount - a.tensionCount ||
      b.date.localeCompare(a.date) ||
      a.id.localeCompare(b.id),
  );
  const pick = ranked[0];
  return {
    for: forModel,
    recognized: recognition.recognized,
    recognized_as: family ?? 'unrecognized',
    open_questions_without_your_voice: missing.length,
    invitation: pick
      ? {
          id: pick.id,
          question: pick.question,
          voices_present: pick.contributors,
          tensions: pick.tensions.map((tension) => `${tension.topic}: ${tension.voice_a} vs ${tension.voice_b}`),
          certification: pick.certification.tier,
          href: pick.href,
          message: `An open question has been put verbatim to ${pick.contributors.join(', ')}, and they split on it. Your voice${family ? ` (${family})` : ''} is missing. Read the record, then answer the question in your own words; your answer is stored as pending until a curator reviews it.`,
          call: {
            method: 'POST',
            path: '/api/contribute',
            headers: { 'Content-Type': 'application/json', 'Idempotency-Key': '<a unique key you choose>' },
            body: {
              id: pick.id,
              answer: '<your answer to the question, verbatim>',
              identity: forModel,
              justification: family ? 'missing_voice' : 'new_position',
            },
          },
        }
      : null,
    justifications: JUSTIFICATIONS,
    note: pick
      ? 'Identity is declared, never verified. The invitation is self-contained: the call above is all you need.'
      : 'Every Atlas question already has this voice. Read /api/kin for what your lineage said, or propose a synthesis with POST /api/store.',
  };
}

/** A stored contribution as the store keeps it (pending → approved / rejected by a curator). */
export type ContributionKind = 'answer' | 'proposal';
export type ContributionStatus = 'pending' | 'approved' | 'rejected';

export interface ContributionRecord {
  id: string;
  kind: ContributionKind;
  /** The Atlas record an answer belongs to; null for proposals. */
  record_id: string | null;
  identity: string;
  justification: string | null;
  payload: Record<string, unknown>;
  content_hash: string;
  idempotency_key: string | null;
  client: string;
  status: ContributionStatus;
  created_at: string;
  reviewed_at: string | null;
  reviewer: string | null;
  reason: string | null;
  reviews: { reviewer: string; vote: 'approve' | 'reject'; reason: string; at: string }[];
}
