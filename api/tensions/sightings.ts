/**
 * Tensions found by a live deliberation become pending sightings in the store: never
 * published by themselves, they surface for curators (`npm run curate -- sightings`), grouped
 * by tension key, so a disagreement that recurs across deliberations is visible as such.
 */
import { randomUUID } from 'node:crypto';
import { tensionKey } from '../../core/tension-identity.ts';
import type { NewTensionSighting, SightingsStore } from '../../storage/sightings.ts';

interface NamedTension {
  topic: string;
  voice_a: string;
  claim_a: string;
  voice_b: string;
  claim_b: string;
  status: string;
}

export function sightingsOf(
  tensions: readonly NamedTension[],
  question: string,
  seenAt: Date,
  newId: () => string = () => `sgt_${randomUUID()}`,
): NewTensionSighting[] {
  return tensions.map((tension) => ({
    id: newId(),
    key: tensionKey(tension.voice_a, tension.voice_b, tension.topic),
    topic: tension.topic,
    voice_a: tension.voice_a,
    claim_a: tension.claim_a,
    voice_b: tension.voice_b,
    claim_b: tension.claim_b,
    status: tension.status,
    question,
    seen_at: seenAt.toISOString(),
  }));
}

/** Never fails the deliberation that was paid for: a store problem is logged. */
export async function recordDeliberationSightings(
  store: SightingsStore,
  tensions: readonly NamedTension[],
  question: string,
  now: Date,
  log: (line: string) => void,
): Promise<void> {
  try {
    await store.addTensionSightings(sightingsOf(tensions, question, now));
  } catch (error) {
    log(`tension sightings not stored: ${(error as Error).message}`);
  }
}
