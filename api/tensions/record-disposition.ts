/**
 * Records a curator's disposition of a tension, for the API and the curator CLI alike.
 * Four kinds are plain notes; synthesis-drafted first stores a pending proposal (reviewed like
 * any proposal), council-review first re-asks the fault line to the live panel (under the
 * spending ceiling) and persists the result as an Atlas record. The disposition, naming what
 * was created, is then appended to content/tensions/<key>.yaml by `append`.
 */
import { randomUUID } from 'node:crypto';
import type { TensionDisposition } from '../../schemas/content.ts';
import type { DispositionRequest } from '../../schemas/dispositions.ts';
import { contentHash } from '../../core/contributions.ts';
import type { TrackedTension } from '../../core/tension-identity.ts';
import type { LiveService } from '../live/service.ts';
import type { ContributionsStore } from '../../storage/contributions.ts';

export interface DispositionDeps {
  now: () => Date;
  /** Appends the entry; `disposition` is the entry as written when the writer re-stamped it (two writers at once). */
  append: (key: string, disposition: TensionDisposition) => { file: string; dispositions: TensionDisposition[]; disposition?: TensionDisposition };
  /** Stores a pending proposal; returns its contribution id. */
  propose?: (proposal: { identity: string; title: string; text: string; sources: string[] }) => Promise<string>;
  /** Runs a council on the question and persists it; returns the record. */
  council?: (question: string) => Promise<{ id: string; href: string }>;
}

export class DispositionUnavailableError extends Error {}
export class InvalidDispositionError extends Error {}

/** The question a council review puts to the panel: the fault line, both sides, verbatim claims. */
export function councilQuestion(tension: TrackedTension): string {
  return (
    `Two AI voices split on "${tension.topic}". One side (${tension.voice_a}) holds: "${tension.claim_a}" ` +
    `The other side (${tension.voice_b}) holds: "${tension.claim_b}" Which position is better supported, ` +
    'or what distinction or evidence would settle it? Say where you stand and why.'
  );
}

export async function recordDisposition(deps: DispositionDeps, tension: TrackedTension, request: DispositionRequest) {
  const base = { by: request.by, at: deps.now().toISOString() };
  let disposition: TensionDisposition;
  let created: { proposal_id?: string; record?: { id: string; href: string } } = {};
  switch (request.kind) {
    case 'held':
      disposition = { kind: 'held', ...base, reason: request.reason };
      break;
    case 'reclassified':
      if (!tension.voices.includes(request.earlier_voice)) {
        throw new InvalidDispositionError(`earlier_voice "${request.earlier_voice}" is not a voice of this tension (${tension.voices.join(', ')})`);
      }
      disposition = { kind: 'reclassified', ...base, earlier_voice: request.earlier_voice, note: request.note };
      break;
    case 'canon-note':
      disposition = { kind: 'canon-note', ...base, note: request.note };
      break;
    case 'crux':
      if (!request.undecidable && (request.moves_a === undefined || request.moves_b === undefined)) {
        throw new InvalidDispositionError('a crux names what would move each side (moves_a and moves_b), or sets undecidable: true');
      }
      disposition = {
        kind: 'crux',
        ...base,
        undecidable: request.undecidable ?? false,
        ...(request.moves_a !== undefined ? { moves_a: request.moves_a } : {}),
        ...(request.moves_b !== undefined ? { moves_b: request.moves_b } : {}),
      };
      break;
    case 'synthesis-drafted': {
      if (!deps.propose) throw new DispositionUnavailableError('synthesis-drafted needs the store of pending proposals');
      const sources = [...new Set(tension.sightings.flatMap((sighting) => (sighting.record_id ? [sighting.record_id] : [])))];
      const proposalId = await deps.propose({ identity: request.by, title: request.title, text: request.text, sources });
      created = { proposal_id: proposalId };
      disposition = { kind: 'synthesis-drafted', ...base, proposal_id: proposalId };
      break;
    }
    case 'council-review': {
      if (!deps.council) throw new DispositionUnavailableError('council-review needs a live panel');
      const record = await deps.council(councilQuestion(tension));
      created = { record };
      // Stamped after the council, so the history stays in order of recording.
      disposition = { kind: 'council-review', by: request.by, at: deps.now().toISOString(), record_id: record.id };
      break;
    }
  }
  const written = deps.append(tension.id, disposition);
  return {
    tension: tension.id,
    disposition: written.disposition ?? disposition,
    ...created,
    file: `content/${written.file}`,
    dispositions: written.dispositions,
  };
}

/** A pending proposal in the store, exactly as POST /api/store {action: "propose"} stores one. */
export function storeProposer(store: ContributionsStore, now: () => Date): NonNullable<DispositionDeps['propose']> {
  return async ({ identity, title, text, sources }) => {
    const outcome = await store.submitContribution(
      {
        id: `ctb_${randomUUID()}`,
        kind: 'proposal',
        record_id: null,
        identity,
        justification: null,
        payload: { title, text, sources, evidence: 'interpretive', note: 'Drafted by a curator as a synthesis of a tension (synthesis-drafted).' },
        content_hash: contentHash(['proposal', identity, title, text]),
        idempotency_key: null,
        client: `curator:${identity}`,
      },
      // Curators authenticated by the bearer secret are not throttled like anonymous writers.
      { key: `disposition:${identity}`, limit: 1_000_000, windowMs: 60_000 },
      now(),
    );
    if (outcome.outcome === 'limited') throw new Error('proposal rate limit reached');
    return outcome.contribution.id;
  };
}

/** Runs a council through the live service (spending ceiling included) and persists what it showed. */
export function liveCouncil(live: LiveService): NonNullable<DispositionDeps['council']> {
  return async (question) => {
    const result = await live.councilNow({ question });
    const persisted = result.council_id === null ? await live.persistCouncil(result) : (await live.persistKeptCouncil(result.council_id)).persisted;
    return { id: persisted.id, href: persisted.href };
  };
}
