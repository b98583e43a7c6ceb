/** A term's postings, [doc, tf, doc, tf, ...] with documents ascending: finding a document in them. */

/** The first pair position at or after `from` whose document is ≥ target (list.length if none). */
export function seek(list: Uint32Array, from: number, target: number): number {
  if (from >= list.length || list[from]! >= target) return from;
  let low = from >> 1; // pair index whose doc is < target
  let step = 1;
  let high = low + step;
  const pairs = list.length >> 1;
  while (high < pairs && list[high * 2]! < target) {
    low = high;
    step *= 2;
    high = low + step;
  }
  if (high > pairs) high = pairs;
  while (low + 1 < high) {
    const middle = (low + high) >> 1;
    if (list[middle * 2]! < target) low = middle;
    else high = middle;
  }
  return high * 2;
}

/** A term's count in a document, from its postings (0 where absent). */
export function countIn(list: Uint32Array, doc: number): number {
  const at = seek(list, 0, doc);
  return list[at] === doc ? list[at + 1]! : 0;
}
