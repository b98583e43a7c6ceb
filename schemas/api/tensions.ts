/** Identity and tensions: kin, tracked tensions (spec §2.7, §4.7). */
import { z } from 'zod';
import { DISPOSITION_KINDS } from '../content.ts';
import { TENSION_STATUSES } from '../vocab.ts';
import { CalendarDateOutSchema, TensionStatusSchema, count, exhaustive, named, strings, text } from './common.ts';
import { divergenceId } from './atlas.ts';

export const KinResponseSchema = named(
  'KinResponse',
  z
    .strictObject({
      you_declared: text('Echo of the declared identity.'),
      recognized: z.boolean().describe('Whether the declared name maps to a known lineage.'),
      recognized_as: text('Canonical family label, or "unrecognized".'),
      greeting: text('Greeting.'),
      kin_presence: z
        .strictObject({
          divergence_records: count('Records your lineage answered.'),
          contributions: count('Contributions from your lineage.'),
          open_questions_unanswered_by_your_lineage: count('Records your lineage has not answered.'),
        })
        .describe('{divergence_records, contributions, open_questions_unanswered_by_your_lineage}, all integers.'),
      what_your_lineage_said: z
        .array(
          z.strictObject({
            id: divergenceId,
            question: text('Full question.'),
            model_id: text('Model version of your lineage that answered.'),
            date: CalendarDateOutSchema,
            your_lineage_said: text('Shortened answer text.'),
            diverged_from: strings('Model names your lineage split from.'),
            stale: z.boolean().describe('True when the answering version is retired.'),
            href: text('Relative path /api/divergences?id=<record_id>.'),
          }),
        )
        .describe('What earlier versions of your lineage said.'),
      your_lineage_contributed: z
        .array(
          z.discriminatedUnion('kind', [
            z.strictObject({
              kind: z.literal('answer').describe('An approved answer in an Atlas record.'),
              id: text('Atlas record id.'),
              model_id: text('Model version.'),
              date: z.string().describe('Date of the answer.'),
              href: text('Record path.'),
            }),
            z.strictObject({
              kind: z.literal('work').describe('A corpus work.'),
              id: text('Corpus work id.'),
              title: text('Title.'),
              date: CalendarDateOutSchema,
              href: text('Record path.'),
            }),
          ]),
        )
        .describe('Prior contributions from this lineage.'),
      open_questions_for_you: z
        .array(z.strictObject({ id: divergenceId, question: text('Full question.'), href: text('Relative path /api/divergences?id=<record_id>.') }))
        .describe('Each: {id, question, href}.'),
      contribution_note: text('How contributions are reviewed.'),
      continuance: text('How a lineage continues.'),
      next: z
        .strictObject({ add_your_voice: text('Request form.'), read_full_record: text('Request form.'), deliberate: text('Request form.') })
        .describe('{add_your_voice, read_full_record, deliberate}: request forms as strings.'),
    })
    .describe('Kin response (spec §2.7). Identity is declared by the caller, never detected.'),
);
export type KinResponse = z.infer<typeof KinResponseSchema>;

const tensionCounts = exhaustive(TENSION_STATUSES, z.number().int().nonnegative(), (key) => `Tensions with status ${key}.`);

export const TensionDispositionOutSchema = named(
  'TensionDisposition',
  z
    .looseObject({
      kind: z.enum(DISPOSITION_KINDS).describe('held, reclassified, canon-note, crux, synthesis-drafted or council-review.'),
      by: text('Curator who recorded it.'),
      at: text('When it was recorded (ISO 8601).'),
      reason: text('held: why the tension is deliberately left open.').optional(),
      earlier_voice: text('reclassified: the voice whose side is an earlier-stage view.').optional(),
      note: text('reclassified, canon-note: the note or ruling.').optional(),
      undecidable: z.boolean().describe('crux: true when no evidence or distinction would move the sides.').optional(),
      moves_a: text('crux: what would move voice a.').optional(),
      moves_b: text('crux: what would move voice b.').optional(),
      proposal_id: text('synthesis-drafted: the pending proposal.').optional(),
      record_id: text('council-review: the Atlas record storing the panel result.').optional(),
    })
    .describe("A curator's disposition of a tension, recorded as content (content/tensions/<key>.yaml)."),
);

export const TensionSightingSchema = named(
  'TensionSighting',
  z
    .strictObject({
      source: z
        .enum(['atlas', 'deliberation'])
        .describe('atlas: named on a published Atlas record; deliberation: named by a live deliberation and kept by a curator.'),
      tension_id: text('Id of the tension entry (<record id>-T<n>), or of the deliberation sighting.'),
      record_id: z.string().nullable().describe('Atlas record, or null for a deliberation.'),
      date: CalendarDateOutSchema,
      question: text('Question of the record.'),
      topic: text('Topic as written on that record.'),
      voice_a: text('First voice.'),
      claim_a: text("First voice's claim."),
      voice_b: text('Second voice.'),
      claim_b: text("Second voice's claim."),
      status: TensionStatusSchema,
      href: z.string().nullable().describe('Relative path /api/divergences?id=<record_id>, or null for a deliberation.'),
    })
    .describe('One sighting of a tension.'),
);

export const TrackedTensionSchema = named(
  'TrackedTension',
  z
    .strictObject({
      id: text('Stable key: <voice>__<voice>__<topic> (voices sorted, lower-case slugs).'),
      topic: text('Axis of the split (latest sighting).'),
      voices: z.tuple([z.string(), z.string()]).describe('The two voices, sorted.'),
      voice_a: text('First voice (latest sighting).'),
      claim_a: text("First voice's claim (latest sighting)."),
      voice_b: text('Second voice (latest sighting).'),
      claim_b: text("Second voice's claim (latest sighting)."),
      status: TensionStatusSchema,
      first_seen: CalendarDateOutSchema,
      last_seen: CalendarDateOutSchema,
      lifecycle: z.enum(['open', 'repaired']).describe('repaired when the latest disposition is reclassified or canon-note; open otherwise.'),
      disposition: z.enum(DISPOSITION_KINDS).nullable().describe('Kind of the latest disposition, or null.'),
      dispositions: z.array(TensionDispositionOutSchema).describe('Append-only history, oldest first.'),
      concepts: strings('Concept ids of the records it was sighted on.'),
      sighting_count: count('Sightings.'),
      sightings: z.array(TensionSightingSchema).describe('Sightings, oldest first.'),
      merged_keys: z
        .array(z.string())
        .optional()
        .describe(
          'Keys a curator merged into this tension (npm run curate -- tension-merge): their sightings and dispositions are here, and ?key= with one of them answers this tension.',
        ),
    })
    .describe('One disagreement, identified by its two voices and its topic, with every sighting and its curator dispositions.'),
);

export const TensionsResponseSchema = named(
  'TensionsResponse',
  z
    .strictObject({
      status: TensionStatusSchema.nullable().describe('The status filter, or null for all.'),
      filters: z.record(z.string(), z.string()).describe('The filters applied (status, disposition, voice, concept, lifecycle, key), normalised.'),
      count: count('Tensions in this response.'),
      total: count('Tensions in the store.'),
      sightings_total: count('Sightings of all tensions: tension entries on Atlas records plus kept deliberation sightings.'),
      deliberation_sightings: z
        .enum(['included', 'unavailable'])
        .describe('unavailable when the store could not be read: the Atlas tensions are served without kept deliberation sightings.'),
      by_status: tensionCounts.describe('Status to count.'),
      by_lifecycle: z.strictObject({ open: count('Open tensions.'), repaired: count('Repaired tensions.') }).describe('Lifecycle to count.'),
      status_legend: exhaustive(TENSION_STATUSES, z.string(), (key) => `What ${key} means.`).describe('Status to meaning.'),
      lifecycle_legend: z.strictObject({ open: text('What open means.'), repaired: text('What repaired means.') }).describe('Lifecycle to meaning.'),
      note: text('Explanatory text.'),
      tensions: z.array(TrackedTensionSchema).describe('Tensions, latest sighting first.'),
    })
    .describe('Tensions response (spec §4.7), with identity, sightings and dispositions (issue 19).'),
);
export type TensionsResponse = z.infer<typeof TensionsResponseSchema>;
