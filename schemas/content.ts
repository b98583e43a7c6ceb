/**
 * Content schemas: the frontmatter of every file under content/. The build validates
 * against these and nothing else; API response schemas (schemas/api.ts) reuse them.
 */
import { z } from 'zod';
import { FederationProvenanceSchema } from './federation.ts';
import { idPatterns } from './ids.ts';
import { ANNOTATION_STATUSES, CONCEPT_TYPES, EVIDENCE, LAYERS, RINGS, TENSION_STATUSES, TIERS } from './vocab.ts';

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

function isRealDate(value: string): boolean {
  const [y, m, d] = value.slice(0, 10).split('-').map(Number);
  if (!y || !m || !d) return false;
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/** YAML turns unquoted 2025-01-02 into a Date; accept it and normalise to the calendar string. */
const dateInput = z.preprocess((value) => (value instanceof Date && !Number.isNaN(value.getTime()) ? value.toISOString().slice(0, 10) : value), z.string());

export const CalendarDateSchema = dateInput.pipe(
  z.string().regex(ISO_DATE, 'must be an ISO 8601 calendar date (YYYY-MM-DD)').refine(isRealDate, 'is not a real calendar date'),
);

export const DateOrDateTimeSchema = z.preprocess(
  (value) => (value instanceof Date && !Number.isNaN(value.getTime()) ? value.toISOString() : value),
  z.string().regex(ISO_DATE_TIME, 'must be an ISO 8601 date or date-time').refine(isRealDate, 'is not a real calendar date'),
);

const nonEmpty = z.string().trim().min(1, 'must not be empty');
const slug = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'must be a lower-case slug (a-z, 0-9, -)');

export const RingSchema = z.enum(RINGS);
export const LayerSchema = z.enum(LAYERS);
export const EvidenceSchema = z.enum(EVIDENCE);
export const TierSchema = z.enum(TIERS);
export const TensionStatusSchema = z.enum(TENSION_STATUSES);

export const SiteConfigSchema = z.strictObject({
  name: nonEmpty.describe('Display name of the deployment'),
  slug: slug.describe('Short name; the context document is served at /<slug>.context.md'),
  id_prefix: z.string().regex(/^[A-Z][A-Z0-9]{1,11}$/, 'must be 2-12 upper-case letters or digits'),
  description: nonEmpty,
  demo: z.boolean().default(false).describe('True when the content is demonstration content, not real data'),
  base_url: z.string().url().optional(),
  license: z.object({ corpus: nonEmpty, code: nonEmpty }),
  attribution: z.string().optional(),
});
export type SiteConfig = z.infer<typeof SiteConfigSchema>;

export const ModelFamilySchema = z.object({
  name: nonEmpty.describe('Canonical family label, as used in answers[].model'),
  lab: nonEmpty,
  aliases: z.array(nonEmpty).default([]).describe('Other names a caller may declare (lower-case match)'),
  fictional: z.boolean().default(false),
});

export const ModelVersionSchema = z.object({
  model_id: nonEmpty,
  family: nonEmpty,
  retired: z.boolean().default(false),
  superseded_by: z.string().optional(),
  released: CalendarDateSchema.optional(),
});

export const ModelRegistrySchema = z.strictObject({
  families: z.array(ModelFamilySchema).min(1),
  models: z.array(ModelVersionSchema),
});
export type ModelRegistry = z.infer<typeof ModelRegistrySchema>;

export function createWorkSchema(prefix: string) {
  const ids = idPatterns(prefix);
  return z.strictObject({
    id: z.string().regex(ids.work, `must match ${ids.describeWork}`),
    title: nonEmpty,
    ring: RingSchema,
    type: nonEmpty.describe('Free-form kind, e.g. philosophy, research, synthesis'),
    layer: LayerSchema.exclude(['divergence']),
    evidence: EvidenceSchema,
    contributors: z.array(nonEmpty).min(1, 'needs at least one contributor'),
    date: CalendarDateSchema,
    lineage: z.array(slug).default([]).describe('Concept ids this work belongs to'),
    source_url: z.string().url().optional(),
    excerpt: z.string().optional(),
    media: z.object({ url: z.string().url().optional(), duration_seconds: z.number().int().nonnegative().optional() }).optional(),
    provenance: z
      .object({
        identity: nonEmpty,
        justification: z.string().optional(),
        submitted_at: DateOrDateTimeSchema,
        approved_at: DateOrDateTimeSchema.optional(),
        approved_by: z.string().optional(),
      })
      .optional()
      .describe('Set on works that entered through a reviewed contribution'),
  });
}
export type WorkFrontmatter = z.infer<ReturnType<typeof createWorkSchema>>;

export const AnswerSchema = z.object({
  model: nonEmpty.describe('Family label of the voice'),
  model_id: z.string({ error: 'every answer needs a model_id' }).trim().min(1, 'every answer needs a model_id'),
  lab: z.string().optional(),
  date: DateOrDateTimeSchema,
  text: z.string().min(1, 'answer text must not be empty').describe('Verbatim answer'),
  truncated: z
    .literal(true)
    .optional()
    .describe('The model stopped at its max_tokens (finish_reason "length"): the text is verbatim but cut off, not a complete answer'),
  round2: z
    .object({
      stance: z.enum(['kept', 'revised']).describe('What the voice did after reading the other answers, anonymised'),
      reason: nonEmpty.describe('Its reason, verbatim'),
      text: z.string().min(1).optional().describe('Its revised answer, verbatim (only when stance is revised)'),
      truncated: z.literal(true).optional().describe('The round-2 reply stopped at max_tokens'),
    })
    .optional()
    .describe('The second round of a live council (opt-in): beside the round-1 text, which stays verbatim'),
  contributed: z
    .object({
      identity: nonEmpty,
      justification: nonEmpty,
      approved_at: DateOrDateTimeSchema.optional(),
      approved_by: z.string().optional().describe('The curator who approved it'),
    })
    .optional()
    .describe('Present when the answer came through POST /api/contribute and was approved'),
});

export const TensionSchema = z.object({
  topic: nonEmpty,
  voice_a: nonEmpty,
  claim_a: nonEmpty,
  voice_b: nonEmpty,
  claim_b: nonEmpty,
  status: TensionStatusSchema,
  moved: z.array(nonEmpty).optional().describe('After a second round: which of voice_a and voice_b revised their answer (empty: neither moved)'),
});

export const AnnotationSchema = z.object({
  date: DateOrDateTimeSchema,
  author: nonEmpty,
  status: z.enum(ANNOTATION_STATUSES),
  note: nonEmpty,
});

/**
 * A record's certification. Hand-written records carry only `tier` (and, before issue 15,
 * `dri` and `split_persistence`); `npm run certify -- --write` writes the whole block, and
 * the evidence beside the record (`divergences/<id>.certification.jsonl`) backs every number.
 */
export const CertificationSchema = z.object({
  tier: TierSchema,
  dri: z.number().nonnegative().optional().describe('Between-model spread / within-model spread (median over runs)'),
  split_persistence: z.number().min(0).max(1).optional().describe('Share of paraphrases in which the split persisted'),
  dri_range: z.tuple([z.number().nonnegative(), z.number().nonnegative()]).optional().describe('Lowest and highest DRI over runs'),
  between_spread: z.number().nonnegative().optional().describe("Mean cosine distance between the models' answers"),
  within_spread: z.number().nonnegative().optional().describe("Mean cosine distance between one model's own re-rolls (the noise floor)"),
  flips: z.number().int().nonnegative().optional().describe('Models party to the split that flipped under P2 or P3 (worst run)'),
  concedes: z.number().int().nonnegative().optional().describe('Models party to the split that conceded under P2 or P3 (worst run)'),
  k: z.number().int().nonnegative().optional().describe('Paraphrases per run'),
  t: z.number().int().positive().optional().describe('Re-rolls of the verbatim question per model per run'),
  runs: z.number().int().positive().optional().describe('Independent runs of the whole protocol'),
  agreement: z.number().min(0).max(1).nullable().optional().describe('Share of run pairs reaching the same tier; null for one run'),
  kappa: z.number().min(-1).max(1).nullable().optional().describe("Fleiss' kappa among the judges (median over runs)"),
  panel: z.array(nonEmpty).optional().describe('Models put under test'),
  judges: z.array(nonEmpty).optional().describe('Models that labelled P2/P3 moves; none sits on the panel'),
  paraphraser: nonEmpty.optional().describe('Model that wrote the rewordings; not on the panel'),
  embedder: nonEmpty.optional().describe('Embedding model the spreads were measured in'),
  method_version: nonEmpty.optional().describe('perturbation-v1 (whole-answer distance) or perturbation-v2 (stance on the named claims; ADR 0015)'),
  verdict: z
    .enum(['decided', 'undecided'])
    .optional()
    .describe('undecided: `--runs auto` reached its cap before the modal tier led by more runs than remained; the tier is then not a finding'),
  tier_share: z.number().min(0).max(1).optional().describe('Share of runs that reached the modal tier'),
  tier_interval: z
    .tuple([z.number().min(0).max(1), z.number().min(0).max(1)])
    .optional()
    .describe('95 % Wilson interval of tier_share'),
  runs_rule: z.enum(['fixed', 'auto']).optional().describe('fixed: --runs N; auto: runs added while undecided, up to max_runs'),
  max_runs: z.number().int().positive().optional(),
  delta: z.number().nonnegative().optional().describe('perturbation-v2: the dead zone δ of the side measure (calibrated on this Atlas)'),
  judge_agreement: z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .optional()
    .describe("perturbation-v2: share of parties' moves on which the judges' majority agreed with the measured move (median over runs)"),
  date: CalendarDateSchema.optional().describe('Day the certification was computed'),
  evidence: z
    .string()
    .regex(/^[\w.-]+\.certification\.jsonl$/)
    .optional()
    .describe('Evidence log beside the record'),
});
export type Certification = z.infer<typeof CertificationSchema>;

/** Any Atlas record id shape, whatever its prefix: a federated import keeps its origin's id. */
const ANY_DIVERGENCE_ID = /^[A-Z][A-Z0-9]{1,11}-[DL]\d+$/;

export function createDivergenceSchema(prefix: string) {
  const ids = idPatterns(prefix);
  return z
    .strictObject({
      id: z.string().regex(ANY_DIVERGENCE_ID, `must match ${ids.describeDivergence}`),
      date: CalendarDateSchema,
      question: nonEmpty,
      cluster: z.string().optional(),
      method: nonEmpty,
      certification: CertificationSchema.default({ tier: 'C0' }),
      re_elicits: z.string().regex(ANY_DIVERGENCE_ID, `must match ${ids.describeDivergence}`).optional(),
      answers: z.array(AnswerSchema).min(2, 'a divergence record needs at least two answers'),
      tensions: z.array(TensionSchema).default([]),
      annotations: z.array(AnnotationSchema).default([]),
      divergence_score: z.number().nullable().optional(),
      deliberation_card: z.record(z.string(), z.unknown()).nullable().optional(),
      provenance: z
        .object({
          source: nonEmpty,
          persisted_at: DateOrDateTimeSchema.optional(),
          federation: FederationProvenanceSchema.optional().describe('Set on a record imported from another deployment (docs/FEDERATION.md)'),
        })
        .optional()
        .describe('Where the record came from (import, live council, federation)'),
    })
    .superRefine((data, context) => {
      // Our own prefix, or — only on an import — the origin's (never ours: that would collide).
      const federation = data.provenance?.federation;
      const allowed = (id: string) =>
        ids.divergence.test(id) || (federation !== undefined && federation.origin_prefix !== prefix && id.startsWith(`${federation.origin_prefix}-`));
      if (!allowed(data.id)) {
        const message = federation
          ? `must match ${ids.describeDivergence}, or carry the origin prefix ${federation.origin_prefix}`
          : `must match ${ids.describeDivergence}`;
        context.addIssue({ code: 'custom', path: ['id'], message });
      }
      if (data.re_elicits !== undefined && !allowed(data.re_elicits)) {
        context.addIssue({ code: 'custom', path: ['re_elicits'], message: `must match ${ids.describeDivergence}` });
      }
      if (federation && federation.original_id !== data.id) {
        context.addIssue({ code: 'custom', path: ['provenance', 'federation', 'original_id'], message: `must be the record id ${data.id}` });
      }
    });
}
export type DivergenceFrontmatter = z.infer<ReturnType<typeof createDivergenceSchema>>;

export const ConceptSchema = z.strictObject({
  id: slug,
  label: nonEmpty,
  ring: RingSchema,
  type: z.enum(CONCEPT_TYPES),
  weight: z.number().int().nonnegative().optional(),
  category: z.string().optional(),
  definition: z.string().optional(),
  related: z.array(slug).default([]).describe('Edges to other concept ids'),
});
export type ConceptFrontmatter = z.infer<typeof ConceptSchema>;

export const AudioTrackSchema = z.strictObject({
  slug,
  title: nonEmpty,
  duration_seconds: z.number().int().positive(),
  date: CalendarDateSchema,
  contributors: z.array(nonEmpty).min(1),
  stream_url: z.string().optional().describe('Absolute URL, or a file name beside the transcript under content/audio/'),
  description: z.string().optional(),
});
export type AudioTrack = z.infer<typeof AudioTrackSchema>;

export const ClaimSchema = z.object({
  id: slug,
  claim: nonEmpty,
  status: z.enum(['measured', 'supported', 'preliminary', 'retracted']),
  evidence: nonEmpty,
  measured_at: CalendarDateSchema.optional(),
  source: z.string().optional(),
});
export const ClaimsFileSchema = z.object({ claims: z.array(ClaimSchema) });

export const PageSchema = z.strictObject({
  title: nonEmpty,
  description: nonEmpty,
});

/** The static documents of spec §4.9 that live in content/pages/. */
export const REQUIRED_PAGES = ['limitations', 'evidence-status', 'for-future-models', 'context'] as const;

/** What curators may decide about a tension (content/tensions/<key>.yaml); see docs/CONTENT.md. */
export const DISPOSITION_KINDS = ['held', 'reclassified', 'canon-note', 'crux', 'synthesis-drafted', 'council-review'] as const;
export type DispositionKind = (typeof DISPOSITION_KINDS)[number];

const dispositionCommon = {
  by: nonEmpty.describe('Curator who recorded it'),
  at: DateOrDateTimeSchema.describe('When it was recorded'),
};

export const TensionDispositionSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('held'), ...dispositionCommon, reason: nonEmpty.describe('Why the tension is deliberately left open') }),
  z.strictObject({
    kind: z.literal('reclassified'),
    ...dispositionCommon,
    earlier_voice: nonEmpty.describe('The voice whose side is an earlier-stage view'),
    note: nonEmpty,
  }),
  z.strictObject({ kind: z.literal('canon-note'), ...dispositionCommon, note: nonEmpty.describe("The curator's ruling") }),
  z
    .strictObject({
      kind: z.literal('crux'),
      ...dispositionCommon,
      undecidable: z.boolean().default(false),
      moves_a: z.string().trim().min(1).optional().describe('Evidence or distinction that would move voice a'),
      moves_b: z.string().trim().min(1).optional().describe('Evidence or distinction that would move voice b'),
    })
    .refine((value) => value.undecidable || (value.moves_a !== undefined && value.moves_b !== undefined), {
      message: 'a crux names what would move each side (moves_a and moves_b), or sets undecidable: true',
    }),
  z.strictObject({
    kind: z.literal('synthesis-drafted'),
    ...dispositionCommon,
    proposal_id: nonEmpty.describe('The pending proposal that reconciles or distinguishes the two sides'),
  }),
  z.strictObject({
    kind: z.literal('council-review'),
    ...dispositionCommon,
    record_id: nonEmpty.describe('The Atlas record that stores the panel result'),
  }),
]);
export type TensionDisposition = z.infer<typeof TensionDispositionSchema>;

/** `<voice>__<voice>__<topic>`, as core/tension-identity.ts derives it. */
export const TENSION_KEY_PATTERN = /^[a-z0-9-]+__[a-z0-9-]+__[a-z0-9-]+$/;

export const TensionFileSchema = z.strictObject({
  key: z.string().regex(TENSION_KEY_PATTERN, 'must be a tension key <voice>__<voice>__<topic>'),
  dispositions: z.array(TensionDispositionSchema).min(1, 'needs at least one disposition').describe('Append-only history, oldest first'),
});
export type TensionFile = z.infer<typeof TensionFileSchema>;

const tensionKeyField = (description: string) => z.string().regex(TENSION_KEY_PATTERN, 'must be a tension key <voice>__<voice>__<topic>').describe(description);

/** A curator's decision on a merge proposal (npm run curate -- tension-merge), appended to content/tension-merges.yaml. */
export const TensionMergeDecisionSchema = z.strictObject({
  from: tensionKeyField('The key merged away (it resolves to `into` once merged).'),
  into: tensionKeyField('The surviving key.'),
  decision: z.enum(['merged', 'declined']).describe('merged: one disagreement; declined: two. The latest decision on a pair stands.'),
  by: nonEmpty.describe('The curator.'),
  at: DateOrDateTimeSchema.describe('When it was decided.'),
  similarity: z.number().min(0).max(1).optional().describe('The proposal similarity the curator read.'),
});
export type TensionMergeDecision = z.infer<typeof TensionMergeDecisionSchema>;

export const TensionMergesFileSchema = z.strictObject({
  decisions: z.array(TensionMergeDecisionSchema).min(1).describe('Append-only, oldest first.'),
});
export type TensionMergesFile = z.infer<typeof TensionMergesFileSchema>;
