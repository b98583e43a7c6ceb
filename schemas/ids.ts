/**
 * Record id shapes (spec §2.1): <PFX>-<number>, <PFX>-R-<NAME>, <PFX>-S<digits>,
 * <PFX>-D<digits>, <PFX>-L<digits>. Media records may also keep an imported
 * `video_<id>` shape (documented in docs/decisions/0003-content-model.md).
 */

const PREFIX_PATTERN = /^[A-Z][A-Z0-9]{1,11}$/;

export function assertPrefix(prefix: string): string {
  if (!PREFIX_PATTERN.test(prefix)) {
    throw new Error(`id prefix "${prefix}" must be 2-12 upper-case letters or digits, starting with a letter`);
  }
  return prefix;
}

export interface IdPatterns {
  work: RegExp;
  divergence: RegExp;
  any: RegExp;
  describeWork: string;
  describeDivergence: string;
}

export function idPatterns(prefix: string): IdPatterns {
  const p = assertPrefix(prefix);
  return {
    work: new RegExp(`^(${p}-\\d+|${p}-R-[A-Z0-9][A-Z0-9_-]*|${p}-S\\d+|video_[A-Za-z0-9_-]+)$`),
    divergence: new RegExp(`^${p}-[DL]\\d+$`),
    any: new RegExp(`^(${p}-\\d+|${p}-R-[A-Z0-9][A-Z0-9_-]*|${p}-[SDL]\\d+|video_[A-Za-z0-9_-]+)$`),
    describeWork: `${p}-<number>, ${p}-R-<NAME>, ${p}-S<digits> or video_<id> (media)`,
    describeDivergence: `${p}-D<digits> or ${p}-L<digits>`,
  };
}
