/**
 * The forward index (forward-index.ts) laid out in a WebAssembly memory of its own, and the
 * feedback's BM25 of a pool's passages computed there by dot.wat's `forwardScores`: the same
 * sums as bm25-given.ts's JavaScript loop, bit for bit, in well under half its time (at 1M
 * passages, the pool's 8,000 passages and 560,000 pairs: bench/README.md, "The feedback's words
 * in the kernel"). Where WebAssembly does not run, the index is built in ordinary arrays and the
 * JavaScript loop scores.
 *
 * Memory: the index's own bytes (it is built in place, not copied), plus the question's regions
 * (term slots, a passage list, their norms and scores), of which only what a question touches
 * takes memory.
 */
import { compactForwardIndex, type CompactForwardIndex, type ForwardArrays, type PostingsField } from './forward-index.ts';
import { dotModule } from './vector-scan.ts';

export interface ForwardKernel {
  readonly index: CompactForwardIndex;
  /**
   * Each listed passage's sum over the query's terms (`termIds`, the field's term ids, with
   * their `factors`, in query order) of factor · tf / (tf + norm), the passage's `norms[i]`
   * given. `escaped`: the positions of passages holding a query term whose count is escaped
   * (COUNT_ESCAPE), whose score here is wrong and must be read again from the postings.
   */
  scores(termIds: ArrayLike<number>, factors: Float64Array, docs: Uint32Array, norms: Float64Array): { scores: Float64Array; escaped: Uint32Array };
}

interface ForwardExports {
  forwardScores(
    offsets: number,
    ids: number,
    wide: number,
    counts: number,
    slots: number,
    factors: number,
    values: number,
    docs: number,
    norms: number,
    n: number,
    out: number,
    escapes: number,
  ): number;
}

const PAGE = 65536;
const MAX_BYTES = 65536 * PAGE;
const align16 = (bytes: number) => Math.ceil(bytes / 16) * 16;

/** The forward index of `field` in the kernel's memory, or undefined where the kernel cannot run or the index would not fit. */
export function createForwardKernel(field: PostingsField): ForwardKernel | undefined {
  const module = dotModule();
  if (!module) return undefined;
  const passages = field.lengths.length;
  const pairs = field.postings.length / 2;
  const vocabulary = field.terms.length;
  const wide = vocabulary > 0x10000;
  // Layout: [offsets][term ids][counts][slots][factors][values][docs][norms][scores][escapes].
  const offsetsAt = 0;
  const idsAt = align16((passages + 1) * 4);
  const countsAt = idsAt + align16(pairs * (wide ? 4 : 2));
  const slotsAt = countsAt + align16(pairs);
  // 16 bytes before factors and values that stay 0: what a pair of no query term reads as its
  // factor and writes as its share (dot.wat's forwardScores has no branch on whether a pair is the
  // query's: 5.2 → 4.3 ms at 1M passages for a feedback pool of 2,000 records, bench/README.md).
  const factorsAt = slotsAt + align16(vocabulary * 4) + 16;
  const valuesAt = factorsAt + align16(vocabulary * 8) + 16;
  const docsAt = valuesAt + align16(vocabulary * 8);
  const normsAt = docsAt + align16(passages * 4);
  const outAt = normsAt + align16(passages * 8);
  const escapesAt = outAt + align16(passages * 8);
  const total = escapesAt + align16(passages * 4);
  if (total > MAX_BYTES) return undefined;
  const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(total / PAGE)), maximum: 65536, shared: true });
  const kernel = new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as ForwardExports;
  const buffer = memory.buffer;
  const arrays: ForwardArrays = {
    offsets: new Uint32Array(buffer, offsetsAt, passages + 1),
    terms: wide ? new Uint32Array(buffer, idsAt, pairs) : new Uint16Array(buffer, idsAt, pairs),
    counts: new Uint8Array(buffer, countsAt, pairs),
  };
  const index = compactForwardIndex(field, undefined, arrays);
  // Query position + 1 per term id, 0 elsewhere: a new memory is all 0s, and each question puts its 0s back.
  const slots = new Int32Array(buffer, slotsAt, vocabulary);
  const factorRegion = new Float64Array(buffer, factorsAt, vocabulary);
  const docRegion = new Uint32Array(buffer, docsAt, passages);
  const normRegion = new Float64Array(buffer, normsAt, passages);
  const out = new Float64Array(buffer, outAt, passages);
  const escapes = new Uint32Array(buffer, escapesAt, passages);

  return {
    index,
    scores(termIds, factors, docs, norms) {
      if (termIds.length !== factors.length) throw new Error(`${termIds.length} terms and ${factors.length} factors`);
      if (termIds.length > vocabulary) throw new Error(`${termIds.length} terms in a field of ${vocabulary}`);
      if (docs.length > passages || norms.length !== docs.length) throw new Error(`${docs.length} passages and ${norms.length} norms asked of ${passages}`);
      let placed = 0;
      try {
        for (; placed < termIds.length; placed++) {
          const id = termIds[placed]!;
          if (!(id >= 0 && id < vocabulary) || slots[id] !== 0) throw new Error(`term id ${id} is not one term of the field's ${vocabulary}, once`);
          slots[id] = placed + 1;
        }
        for (const doc of docs) if (doc >= passages) throw new Error(`no passage ${doc} among ${passages}`);
        factorRegion.set(factors);
        docRegion.set(docs);
        normRegion.set(norms);
        const listed = kernel.forwardScores(
          offsetsAt,
          idsAt,
          wide ? 1 : 0,
          countsAt,
          slotsAt,
          factorsAt,
          valuesAt,
          docsAt,
          normsAt,
          docs.length,
          outAt,
          escapesAt,
        );
        return { scores: out.slice(0, docs.length), escaped: escapes.slice(0, listed) };
      } finally {
        for (let j = 0; j < placed; j++) slots[termIds[j]!] = 0;
      }
    },
  };
}
