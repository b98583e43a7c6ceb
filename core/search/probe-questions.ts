/**
 * Questions a corpus asks of itself, with their answers known: judgements for a corpus that has
 * none. From a sample of its works, one sentence of a passage is held back (the inverse cloze
 * task of Lee et al., 2019): the sentence is the question, the work without it is the answer.
 * The build ranks these through the real search (scripts/lib/retrieval-probe.ts) to see how far
 * each signal finds the work on this corpus, which tells a corpus the embedder reads well from
 * one whose words it does not know, without anyone's judgements.
 */
import { fnv1a } from '../random.ts';
import type { SearchChunk, SearchRecord } from './types.ts';

export interface ProbeQuestion {
  /** The work the question came from: the one right answer. */
  record: number;
  /** The passage it was held back from. */
  chunk: number;
  question: string;
  /** That passage without the question: what the work says in its place. */
  rest: string;
}

export interface ProbeOptions {
  /** At most this many questions. */
  count: number;
  /** Words a held-back sentence may have: short ones say little, long ones are half the passage. */
  minWords?: number;
  maxWords?: number;
  /** Mixed into every draw: another seed, another sample. */
  seed?: number;
}

/** Sentences of a text, with where each starts: split after . ! ? followed by space and a capital, digit or quote. */
export function sentences(text: string): { start: number; text: string }[] {
  const found: { start: number; text: string }[] = [];
  const boundary = /[.!?]["')\]]?\s+(?=["'([]?[A-Z0-9])/g;
  let start = 0;
  for (let match = boundary.exec(text); match; match = boundary.exec(text)) {
    const end = match.index + match[0].length;
    found.push({ start, text: text.slice(start, end).trim() });
    start = end;
  }
  if (start < text.length && text.slice(start).trim() !== '') found.push({ start, text: text.slice(start).trim() });
  return found;
}

function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/**
 * The probe's questions: works drawn in the order of a hash of their id and the seed (the same
 * sample on every build of the same corpus), each giving one sentence of one of its passages,
 * never the passage's first sentence (a work's passages begin with its title) and never a
 * passage's only other sentence (the answer must keep something to be found by).
 */
export function probeQuestions(records: readonly SearchRecord[], chunks: readonly SearchChunk[], options: ProbeOptions): ProbeQuestion[] {
  const minWords = options.minWords ?? 6;
  const maxWords = options.maxWords ?? 60;
  const seed = String(options.seed ?? 0);
  const chunksOf = new Map<number, number[]>();
  chunks.forEach((chunk, at) => {
    if (records[chunk.record]?.kind !== 'work') return;
    const list = chunksOf.get(chunk.record);
    if (list) list.push(at);
    else chunksOf.set(chunk.record, [at]);
  });
  const order = [...chunksOf.keys()]
    .map((record) => ({ record, draw: fnv1a(`${seed}:${records[record]!.id}`) }))
    .sort((a, b) => a.draw - b.draw || a.record - b.record);
  const questions: ProbeQuestion[] = [];
  for (const { record, draw } of order) {
    if (questions.length >= options.count) break;
    const candidates: { chunk: number; start: number; text: string }[] = [];
    for (const chunk of chunksOf.get(record)!) {
      const parts = sentences(chunks[chunk]!.text);
      if (parts.length < 3) continue;
      for (const part of parts.slice(1)) {
        const words = wordCount(part.text);
        if (words >= minWords && words <= maxWords) candidates.push({ chunk, ...part });
      }
    }
    if (candidates.length === 0) continue;
    const pick = candidates[draw % candidates.length]!;
    const text = chunks[pick.chunk]!.text;
    const rest = `${text.slice(0, pick.start)}${text.slice(pick.start + pick.text.length)}`.replace(/\s+/g, ' ').trim();
    questions.push({ record, chunk: pick.chunk, question: pick.text, rest });
  }
  return questions;
}
