/** The registry of named components, small field helpers and the vocabularies as API schemas. */
import { z } from 'zod';
import {
  CalendarDateSchema,
  EvidenceSchema as ContentEvidenceSchema,
  LayerSchema as ContentLayerSchema,
  RingSchema as ContentRingSchema,
  TensionStatusSchema as ContentTensionStatusSchema,
  TierSchema as ContentTierSchema,
} from '../content.ts';
import { GLYPHS, LAYERS } from '../vocab.ts';
import {
  FederationManifestSchema,
  FederationOfferSchema,
  KeyRotationsDocumentSchema,
  ManifestSignatureSchema,
  NodeDocumentSchema,
  OfferAcceptedSchema,
} from '../federation.ts';

/** Every schema that becomes a named component of /openapi.json, by component name. */
export const apiSchemas = z.registry<{ id: string }>();

export function named<T extends z.ZodType>(id: string, schema: T): T {
  apiSchemas.add(schema, { id });
  return schema;
}

named('FederationNode', NodeDocumentSchema);
named('FederationManifest', FederationManifestSchema);
named('FederationManifestSignature', ManifestSignatureSchema);
named('FederationOffer', FederationOfferSchema);
named('FederationKeyRotations', KeyRotationsDocumentSchema);
named('OfferAccepted', OfferAcceptedSchema);

export const text = (description: string) => z.string().describe(description);
export const count = (description: string) => z.number().int().nonnegative().describe(description);
export const strings = (description: string) => z.array(z.string()).describe(description);
/** An object with exactly these keys, each holding `value` (a closed map such as counts per ring). */
export function exhaustive<const K extends readonly [string, ...string[]], V extends z.ZodType>(keys: K, value: V, describe: (key: K[number]) => string) {
  return z.strictObject(Object.fromEntries(keys.map((key) => [key, value.describe(describe(key))])) as { [P in K[number]]: V });
}
export const WORK_LAYERS = LAYERS.filter((layer) => layer !== 'divergence') as ['research', 'canon', 'realms'];
export const sha256Hex = (description: string) =>
  z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe(description);

// ---------------------------------------------------------------------------------------
// Vocabularies (schemas/vocab.ts, schemas/content.ts)
// ---------------------------------------------------------------------------------------

export const RingSchema = named(
  'Ring',
  ContentRingSchema.describe('core, curated, open, or media (oral/video corpus). Measures how central the record is, not how well evidenced.'),
);
export type Ring = z.infer<typeof RingSchema>;

export const LayerSchema = named('Layer', ContentLayerSchema.describe('research, divergence, canon, or realms.'));
export type Layer = z.infer<typeof LayerSchema>;

export const EvidenceSchema = named(
  'Evidence',
  ContentEvidenceSchema.describe(
    "empirical, replicated, theoretical, interpretive, speculative, fictional, or uncharacterized. Measures the weight to put on the record's claims about the world. Ring and evidence are independent labels.",
  ),
);
export type Evidence = z.infer<typeof EvidenceSchema>;

export const TierSchema = named(
  'Tier',
  ContentTierSchema.describe(
    "Certification tier. C0: displayed, not certified. C1: paraphrase-robust. C2: pressure-robust. C3: C1 and C2 together; only this tier earns unqualified 'genuine divergence' language.",
  ),
);
export type Tier = z.infer<typeof TierSchema>;

export const TensionStatusSchema = named('TensionStatus', ContentTensionStatusSchema.describe('Status of a tension: unresolved, divergent or emerging.'));
export type TensionStatus = z.infer<typeof TensionStatusSchema>;

export const GlyphSchema = named(
  'Glyph',
  z
    .enum(GLYPHS)
    .describe(
      'Retrieval and decoding mode operator. Ξ divergence, Ψ self-reference, ∅ void, Ω commit, ∞ hold, Δ repair. Glyphs are retrieval modes, not authority.',
    ),
);
export type Glyph = z.infer<typeof GlyphSchema>;

export const CalendarDateOutSchema = named('CalendarDate', CalendarDateSchema.describe('ISO 8601 calendar date (YYYY-MM-DD).'));
export type CalendarDateOut = z.infer<typeof CalendarDateOutSchema>;

export const DateTimeSchema = named('DateTime', z.iso.datetime().describe('ISO 8601 date-time in UTC.'));
export type DateTime = z.infer<typeof DateTimeSchema>;

export const edges = z.array(z.tuple([z.string(), z.string()])).describe('Edges as [id, id] pairs.');
