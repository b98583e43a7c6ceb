/**
 * The exhaustive BM25 of every passage (bm25.ts's bestPassages) in dot.wat's `bestPassages`:
 * the same sums and the same best passage per record, bit for bit, in about half the time of
 * the JavaScript loop at a million passages (14.2 → 7.8 ms; bench/README.md, session 15), where
 * the words had taken longer than the question's embedding beside them.
 *
 * The kernel reads the text field's postings and the passages' records where they lie in a
 * WebAssembly memory: the server reads the index file straight into one (`kernelBytes`), so a
 * million passages' 600 MB of postings are not held twice; any other index (a build's, a test's)
 * is copied into a memory of the kernel's own. Its own regions come after them: each passage's
 * length norm (for the parameters last asked), a block's sums, each record's best, the query's
 * terms and a record mask.
 *
 * `scoresOf` scores the listed passages only (the feedback's pool: bm25-given.ts) at once, in
 * regions of its own but the norms, so a run paused between its steps does not keep it from the
 * kernel unless it asks for other norms.
 *
 * One question at a time: a run (`begin` … `finish`) holds the regions between its steps, and a
 * question that begins while another's run is paused between steps is told no (undefined): a
 * question that can wait waits for `released()` (bm25.ts's scoresPausing: the JavaScript loop,
 * on the same thread, would take twice as long), one that cannot scores in JavaScript — the
 * same scores.
 */
import { dotModule } from './vector-scan.ts';

interface PassageExports {
  bestPassages(
    table: number,
    n: number,
    factors: number,
    norms: number,
    chunkRecords: number,
    mask: number,
    scratch: number,
    best: number,
    from: number,
    to: number,
    block: number,
  ): void;
  passageScores(table: number, n: number, factors: number, norms: number, docs: number, count: number, positions: number, out: number, gallop: number): void;
}

/** A run over one question's terms: `step` scores passages [from, to), `finish` gives each record's best. */
export interface PassageRun {
  step(from: number, to: number): void;
  /** Each record's best passage score into `best` (of the records' length); the run ends. */
  finish(best: Float64Array): void;
  /** Ends the run without reading it (after a failure): the next question may begin. */
  release(): void;
}

export interface PassageKernel {
  /**
   * A run for the given postings lists (views of the field's postings, in query order) and
   * factors, under `norms` (one per passage; `normsKey` names them, so they are copied in only
   * when they change) and the optional record mask; undefined when another run is under way or
   * a list is not the field's (the caller then scores in JavaScript).
   */
  begin(lists: readonly Uint32Array[], factors: ArrayLike<number>, norms: Float64Array, normsKey: string, allowed?: Uint8Array): PassageRun | undefined;
  /** Whether a run holds the kernel (begun, not yet finished or released). */
  readonly busy: boolean;
  /** Resolves when the run that holds the kernel ends (at once when none does). */
  released(): Promise<void>;
  /**
   * The listed passages' scores (`docs` ascending and distinct; bm25-given.ts's scoreTerms, the
   * same sums): each list merged with the passages, walked where it has fewer than `gallop` pairs
   * per passage, else galloped through. Undefined where it cannot run (a list not the field's,
   * more than POOL_PASSAGES passages or KERNEL_TERMS terms, other norms while a run is paused):
   * the caller scores in JavaScript. It runs at once, so a paused run of `begin` does not stop it.
   */
  scoresOf(
    lists: readonly Uint32Array[],
    factors: ArrayLike<number>,
    norms: Float64Array,
    normsKey: string,
    docs: Uint32Array,
    gallop: number,
  ): Float64Array | undefined;
}

const PAGE = 65536;
const MAX_PAGES = 65536;
const align16 = (bytes: number) => Math.ceil(bytes / 16) * 16;
/** Query terms a run takes at most (a longer query scores in JavaScript). */
export const KERNEL_TERMS = 4096;
/** Passages `scoresOf` takes at most (more score in JavaScript): the feedback's pool of 2,000 records is far fewer. */
export const POOL_PASSAGES = 65535;

/** The memories `kernelBytes` made, by the buffer its views see. */
const memories = new WeakMap<ArrayBufferLike, WebAssembly.Memory>();

/**
 * `size` bytes at the start of a WebAssembly memory (shared, so that the kernel's regions can
 * be added after them without moving them), for an index file to be read into; undefined where
 * WebAssembly does not run or the size is past what a memory holds.
 */
export function kernelBytes(size: number): Uint8Array | undefined {
  if (!dotModule() || size > (MAX_PAGES - 1) * PAGE) return undefined;
  const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(size / PAGE)), maximum: MAX_PAGES, shared: true });
  memories.set(memory.buffer, memory);
  return new Uint8Array(memory.buffer, 0, size);
}

export interface PassageField {
  /** Every term's postings, one after the other ([doc, tf] pairs); lists are views of it. */
  postings: Uint32Array;
  chunkRecords: Uint32Array;
  recordCount: number;
  block: number;
}

/**
 * The kernel over a field: in place where `postings` and `chunkRecords` lie in one memory
 * `kernelBytes` made, else over copies of them; undefined where WebAssembly does not run or
 * the memory would pass 4 GB.
 */
export function createPassageKernel({ postings, chunkRecords, recordCount, block }: PassageField): PassageKernel | undefined {
  const module = dotModule();
  if (!module) return undefined;
  const passages = chunkRecords.length;
  const inPlace = postings.buffer === chunkRecords.buffer ? memories.get(postings.buffer) : undefined;
  const copied = inPlace ? 0 : align16(postings.byteLength) + align16(chunkRecords.byteLength);
  const memory = inPlace ?? new WebAssembly.Memory({ initial: 1, maximum: MAX_PAGES, shared: true });
  // Layout after what is there: [postings][chunkRecords] when copied, then norms, scratch, best,
  // table, factors, mask, and scoresOf's own table, factors, passages and scores.
  const start = align16(inPlace ? memory.buffer.byteLength : 0);
  const postingsAt = inPlace ? postings.byteOffset : start;
  const recordsAt = inPlace ? chunkRecords.byteOffset : start + align16(postings.byteLength);
  const normsAt = start + copied;
  const scratchAt = normsAt + align16(passages * 8);
  const bestAt = scratchAt + align16(block * 8);
  const tableAt = bestAt + align16(recordCount * 8);
  const factorsAt = tableAt + KERNEL_TERMS * 8;
  const maskAt = factorsAt + KERNEL_TERMS * 8;
  const listsAt = maskAt + align16(recordCount);
  const listFactorsAt = listsAt + KERNEL_TERMS * 8;
  const docsAt = listFactorsAt + KERNEL_TERMS * 8;
  const outAt = docsAt + align16(POOL_PASSAGES * 4);
  const positionsAt = outAt + align16(POOL_PASSAGES * 8);
  const total = positionsAt + align16(passages * 2);
  if (total > MAX_PAGES * PAGE) return undefined;
  const pages = Math.ceil(total / PAGE) - memory.buffer.byteLength / PAGE;
  if (pages > 0) memory.grow(pages);
  const buffer = memory.buffer;
  if (!inPlace) {
    new Uint32Array(buffer, postingsAt, postings.length).set(postings);
    new Uint32Array(buffer, recordsAt, passages).set(chunkRecords);
  }
  const kernel = new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as PassageExports;
  const normRegion = new Float64Array(buffer, normsAt, passages);
  const bestRegion = new Float64Array(buffer, bestAt, recordCount);
  const runTable = new Uint32Array(buffer, tableAt, KERNEL_TERMS * 2);
  const factorRegion = new Float64Array(buffer, factorsAt, KERNEL_TERMS);
  const mask = new Uint8Array(buffer, maskAt, recordCount);
  const listTable = new Uint32Array(buffer, listsAt, KERNEL_TERMS * 2);
  const listFactors = new Float64Array(buffer, listFactorsAt, KERNEL_TERMS);
  const docRegion = new Uint32Array(buffer, docsAt, POOL_PASSAGES);
  const outRegion = new Float64Array(buffer, outAt, POOL_PASSAGES);
  /** Per passage, its position among those scoresOf lists + 1 while it runs (all 0 between calls). */
  const positions = new Uint16Array(buffer, positionsAt, passages);
  let normsIn: string | undefined;
  let busy = false;
  /** Those waiting for the run under way to end. */
  let waiting: (() => void)[] = [];

  /** A list's address in the kernel's memory, or -1 where it is not a view of the field's postings. */
  function addressOf(list: Uint32Array): number {
    const offset = list.byteOffset - postings.byteOffset;
    if (list.buffer !== postings.buffer || offset < 0 || offset + list.byteLength > postings.byteLength || list.length % 2 !== 0) return -1;
    return postingsAt + offset;
  }

  /** The lists' address ranges and factors into `into` and `factorsInto`; false where a list is not the field's. */
  function fillTable(lists: readonly Uint32Array[], factors: ArrayLike<number>, into: Uint32Array, factorsInto: Float64Array): boolean {
    for (let j = 0; j < lists.length; j++) {
      const at = addressOf(lists[j]!);
      if (at < 0) return false;
      into[2 * j] = at;
      into[2 * j + 1] = at + lists[j]!.byteLength;
      factorsInto[j] = factors[j]!;
    }
    return true;
  }

  return {
    get busy() {
      return busy;
    },
    released: () => (busy ? new Promise<void>((resolve) => waiting.push(resolve)) : Promise.resolve()),

    scoresOf(lists, factors, norms, normsKey, docs, gallop) {
      if (lists.length > KERNEL_TERMS || docs.length > POOL_PASSAGES || norms.length !== passages) return undefined;
      // A paused run reads the norms region: other norms wait for it to end.
      if (normsIn !== normsKey && busy) return undefined;
      for (let i = 0; i < docs.length; i++) if (docs[i]! >= passages || (i > 0 && docs[i]! <= docs[i - 1]!)) return undefined;
      if (!fillTable(lists, factors, listTable, listFactors)) return undefined;
      if (normsIn !== normsKey) {
        normRegion.set(norms);
        normsIn = normsKey;
      }
      docRegion.set(docs);
      outRegion.fill(0, 0, docs.length);
      for (let i = 0; i < docs.length; i++) positions[docs[i]!] = i + 1;
      try {
        kernel.passageScores(listsAt, lists.length, listFactorsAt, normsAt, docsAt, docs.length, positionsAt, outAt, gallop);
      } finally {
        for (let i = 0; i < docs.length; i++) positions[docs[i]!] = 0;
      }
      return outRegion.slice(0, docs.length);
    },

    begin(lists, factors, norms, normsKey, allowed) {
      if (busy || lists.length > KERNEL_TERMS || norms.length !== passages || (allowed && allowed.length !== recordCount)) return undefined;
      if (!fillTable(lists, factors, runTable, factorRegion)) return undefined;
      if (normsIn !== normsKey) {
        normRegion.set(norms);
        normsIn = normsKey;
      }
      if (allowed) mask.set(allowed);
      bestRegion.fill(0);
      busy = true;
      let open = true;
      const end = () => {
        if (!open) return;
        busy = false;
        open = false;
        const woken = waiting;
        waiting = [];
        for (const wake of woken) wake();
      };
      return {
        step(from, to) {
          if (!open) throw new Error('the passage kernel run has ended');
          kernel.bestPassages(tableAt, lists.length, factorsAt, normsAt, recordsAt, allowed ? maskAt : 0, scratchAt, bestAt, from, to, block);
        },
        finish(best) {
          if (!open) throw new Error('the passage kernel run has ended');
          best.set(bestRegion);
          end();
        },
        release: end,
      };
    },
  };
}
