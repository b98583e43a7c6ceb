import { describe, expect, it } from 'vitest';
import { deterministicReceipt, SURFACE_SIMILARITY } from '../core/receipt.ts';
import type { DivergenceFull, TensionEntry } from '../core/records.ts';
import type { ScoredRecord } from '../core/search/types.ts';

function tension(recordId: string, index: number, voiceA: string, voiceB: string, topic: string): TensionEntry {
  return {
    id: `${recordId}#t${index}`,
    record_id: recordId,
    topic,
    voice_a: voiceA,
    claim_a: `${voiceA} on ${topic}`,
    voice_b: voiceB,
    claim_b: `${voiceB} on ${topic}`,
    status: 'divergent',
    date: '2026-01-01',
    question: `Question of ${recordId}?`,
    href: `/atlas/${recordId}`,
  };
}

function atlasRecord(id: string, tensions: TensionEntry[]): DivergenceFull {
  return { id, tensions } as unknown as DivergenceFull;
}

function hit(id: string, kind: 'work' | 'divergence', similarity: number): ScoredRecord {
  return {
    record: {
      id,
      kind,
      title: id,
      ring: 'core',
      type: 'essay',
      layer: 'works',
      evidence: 'observed',
      contributors: [`author of ${id}`],
      date: '2026-01-01',
      excerpt: '',
      lineage: [],
    } as unknown as ScoredRecord['record'],
    relevanceScore: similarity,
    similarity,
    lexical: 0,
    coverage: 0,
    calibrated: similarity,
    signals: 'semantic',
  };
}

const near = atlasRecord('PLY-D-1', [tension('PLY-D-1', 1, 'Claude', 'GPT', 'memory'), tension('PLY-D-1', 2, 'Gemini', 'Grok', 'memory')]);
const far = atlasRecord('PLY-D-2', [tension('PLY-D-2', 1, 'GPT', 'Gemini', 'tone'), tension('PLY-D-2', 2, 'Claude', 'Grok', 'consciousness')]);
const byId = new Map([near, far].map((record) => [record.id, record]));

describe('deterministic receipt', () => {
  it('surfaces tensions of Atlas records at least SURFACE_SIMILARITY close, and no others', () => {
    const receipt = deterministicReceipt(
      'q',
      [hit('PLY-D-1', 'divergence', SURFACE_SIMILARITY), hit('PLY-D-2', 'divergence', SURFACE_SIMILARITY - 0.01)],
      byId,
    );
    expect(receipt.divergence_surfaced.map((item) => item.record_id)).toEqual(['PLY-D-1', 'PLY-D-1']);
    expect(receipt.verdict).toBe('substantive');
  });

  it('with nothing close and no strong match, the verdict is marginal and nothing is surfaced', () => {
    const receipt = deterministicReceipt('q', [hit('PLY-D-2', 'divergence', 0.4), hit('PLY-W-1', 'work', 0.35)], byId);
    expect(receipt.divergence_surfaced).toEqual([]);
    expect(receipt.verdict).toBe('marginal');
  });

  it("lists the tensions that answer the question first, whatever their record's similarity, once each", () => {
    const answering = new Map([['PLY-D-2', [far.tensions[1]!]]]);
    const receipt = deterministicReceipt(
      'Where do Claude and Grok disagree about consciousness?',
      [hit('PLY-D-1', 'divergence', 0.6), hit('PLY-D-2', 'divergence', 0.38)],
      byId,
      answering,
    );
    expect(receipt.divergence_surfaced.map((item) => `${item.record_id} ${item.voice_a}/${item.voice_b}`)).toEqual([
      'PLY-D-2 Claude/Grok',
      'PLY-D-1 Claude/GPT',
      'PLY-D-1 Gemini/Grok',
    ]);
    // The record's other tension (not about the question, record below the floor) stays out.
    expect(receipt.divergence_surfaced.some((item) => item.topic === 'tone')).toBe(false);
    expect(receipt.verdict).toBe('substantive');
  });

  it('never repeats a tension that is both answering and close', () => {
    const answering = new Map([['PLY-D-1', [near.tensions[0]!]]]);
    const receipt = deterministicReceipt('q', [hit('PLY-D-1', 'divergence', 0.7)], byId, answering);
    expect(receipt.divergence_surfaced.map((item) => item.voice_a)).toEqual(['Claude', 'Gemini']);
  });

  it('ignores answering tensions of records that were not returned', () => {
    const answering = new Map([['PLY-D-2', [far.tensions[1]!]]]);
    const receipt = deterministicReceipt('q', [hit('PLY-W-1', 'work', 0.3)], byId, answering);
    expect(receipt.divergence_surfaced).toEqual([]);
  });
});
