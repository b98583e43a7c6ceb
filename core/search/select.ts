/** Selection over score arrays, shared by the vector side's pools and the lexical top k. */

/** The n-th largest value (1-based) by quickselect; reorders `values`. */
export function nthLargest(values: Float64Array, n: number): number {
  let lo = 0;
  let hi = values.length - 1;
  const target = n - 1; // position in descending order
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! > pivot) i++;
      while (values[j]! < pivot) j--;
      if (i <= j) {
        const swap = values[i]!;
        values[i] = values[j]!;
        values[j] = swap;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else break;
  }
  return values[target]!;
}
