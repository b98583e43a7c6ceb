/**
 * Which passage of the previous build each passage of this build is (the same identity: its
 * record and text), each previous passage taken once, in order: the matching the full-text
 * index, the vectors and the vector index's keys all carry passages over by.
 */

/** For each passage, the previous build's passage with the same identity, or -1. */
export function matchPassages(identities: readonly string[], previous: readonly string[]): Int32Array {
  // The first passage of each identity, and the rest of a repeated one (rare: a map of numbers, not of a million lists).
  const first = new Map<string, number>();
  const more = new Map<string, number[]>();
  previous.forEach((identity, chunk) => {
    if (!first.has(identity)) first.set(identity, chunk);
    else {
      const rest = more.get(identity);
      if (rest) rest.push(chunk);
      else more.set(identity, [chunk]);
    }
  });
  return Int32Array.from(identities, (identity) => {
    const chunk = first.get(identity);
    if (chunk === undefined) return -1;
    const next = more.get(identity)?.shift();
    if (next === undefined) first.delete(identity);
    else first.set(identity, next);
    return chunk;
  });
}
