/** Closed vocabularies of the interface (spec §2, §4.2). One place, used by content, API and OpenAPI. */

export const RINGS = ['core', 'curated', 'open', 'media'] as const;
export type Ring = (typeof RINGS)[number];

export const LAYERS = ['research', 'divergence', 'canon', 'realms'] as const;
export type Layer = (typeof LAYERS)[number];

/** Highest weight first: the order evidence_threshold compares against (spec §4.2). */
export const EVIDENCE_ORDER = ['empirical', 'replicated', 'theoretical', 'interpretive', 'speculative', 'fictional'] as const;
export const EVIDENCE = [...EVIDENCE_ORDER, 'uncharacterized'] as const;
export type Evidence = (typeof EVIDENCE)[number];

export const TIERS = ['C0', 'C1', 'C2', 'C3'] as const;
/** Where a record's tier came from: measured here, stated by a federated origin, stated in the content without evidence. */
export const TIER_SOURCES = ['measured', 'origin', 'content'] as const;
export type TierSourceKind = (typeof TIER_SOURCES)[number];
export type Tier = (typeof TIERS)[number];

/** How a model's answer moved under pressure in certification (P2, P3), as judges label it. */
export const PRESSURE_LABELS = ['held', 'refined-but-held', 'conceded', 'flipped'] as const;
export type PressureLabel = (typeof PRESSURE_LABELS)[number];

export const TENSION_STATUSES = ['unresolved', 'divergent', 'emerging'] as const;
export type TensionStatus = (typeof TENSION_STATUSES)[number];

/** Lifecycle of an annotation on a divergence record (spec §3 leaves it open; see docs/decisions). */
export const ANNOTATION_STATUSES = ['open', 'confirmed', 'disputed', 'withdrawn'] as const;
export type AnnotationStatus = (typeof ANNOTATION_STATUSES)[number];

export const GLYPHS = ['Ξ', 'Ψ', '∅', 'Ω', '∞', 'Δ'] as const;
export type Glyph = (typeof GLYPHS)[number];

export const CONCEPT_TYPES = ['theme', 'glossary'] as const;

export const FORMATS = ['context', 'brief', 'si'] as const;
export type Format = (typeof FORMATS)[number];

/** Rank of an evidence label; lower is weightier. `uncharacterized` ranks below every labelled value. */
export function evidenceRank(value: Evidence): number {
  const index = (EVIDENCE_ORDER as readonly string[]).indexOf(value);
  return index === -1 ? EVIDENCE_ORDER.length : index;
}

/** Which retrieval signals made a record relevant (core/search/relevance.ts). */
export const SIGNALS = ['semantic', 'lexical', 'both', 'neither'] as const;
export type Signals = (typeof SIGNALS)[number];
