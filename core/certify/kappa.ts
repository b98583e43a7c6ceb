/**
 * Fleiss' kappa: agreement among a fixed number of raters assigning each item to one of
 * several categories, corrected for chance. 1 is perfect agreement, 0 chance, below 0 worse
 * than chance (never below -1).
 */

/**
 * `ratings[item]` lists the category each rater gave that item; every item must have the
 * same number of raters, at least two. Returns undefined when there is nothing to measure.
 * When every rating falls in one category, chance agreement is 1 and kappa is defined as 1.
 */
export function fleissKappa<C extends string>(ratings: readonly (readonly C[])[]): number | undefined {
  const items = ratings.filter((row) => row.length > 0);
  if (items.length === 0) return undefined;
  const raters = items[0]!.length;
  if (raters < 2 || items.some((row) => row.length !== raters)) return undefined;
  const totals = new Map<C, number>();
  let observed = 0;
  for (const row of items) {
    const counts = new Map<C, number>();
    for (const category of row) counts.set(category, (counts.get(category) ?? 0) + 1);
    let agreeing = 0;
    for (const [category, count] of counts) {
      agreeing += count * (count - 1);
      totals.set(category, (totals.get(category) ?? 0) + count);
    }
    observed += agreeing / (raters * (raters - 1));
  }
  observed /= items.length;
  let chance = 0;
  for (const count of totals.values()) chance += (count / (items.length * raters)) ** 2;
  if (chance >= 1) return 1;
  const kappa = (observed - chance) / (1 - chance);
  return Math.max(-1, Math.min(1, kappa));
}
