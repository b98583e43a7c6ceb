/** Static resources: concept index and cards, lineage, audio, claims, record twins, this document (spec §4.9). */
import { z } from 'zod';
import { DISPOSITION_KINDS, ClaimSchema, LayerSchema as ContentLayerSchema } from '../content.ts';
import { CalendarDateOutSchema, EvidenceSchema, RingSchema, TensionStatusSchema, count, edges, named, strings, text } from './common.ts';
import { ConceptNodeSchema, RECORD_ID_NOTE } from './query.ts';
import { fullFields } from './atlas.ts';
import { RecordHistorySchema } from './record-history.ts';

export const ConceptIndexSchema = named(
  'ConceptIndex',
  z
    .strictObject({
      schema: z.record(z.string(), z.string()).describe('The fixed schema of a concept card, field to type.'),
      nodes: z.array(ConceptNodeSchema.extend({ href: text('Path of the concept card.') })).describe('Concepts.'),
      edges,
    })
    .describe('Concept index (/concepts/): canonical concept cards with a fixed schema.'),
);
export type ConceptIndex = z.infer<typeof ConceptIndexSchema>;

const LineageTensionSchema = z.strictObject({
  id: text('Tension key.'),
  topic: text('Topic.'),
  voices: z.tuple([z.string(), z.string()]).describe('The two voices.'),
  status: TensionStatusSchema,
  lifecycle: z.enum(['open', 'repaired']).describe('open or repaired.'),
  disposition: z.enum(DISPOSITION_KINDS).nullable().describe('Latest disposition, or null.'),
  sighting_count: count('Sightings.'),
  record_ids: strings('Atlas records it was sighted on.'),
  href: text('GET /api/tensions?key=<id>.'),
});

export const LineageSchema = named(
  'Lineage',
  z
    .strictObject({
      concept: ConceptNodeSchema,
      related: z
        .array(
          z.strictObject({
            id: text('Concept id.'),
            label: text('Label.'),
            co_occurrences: count('Works that carry both concepts.'),
            href: text('Its lineage.'),
          }),
        )
        .describe('Concepts that co-occur on the same works, most often first. Undirected: no parent or child is claimed.'),
      spine: z
        .array(
          z.strictObject({
            kind: z.enum(['work', 'divergence']).describe('work or divergence (Atlas record).'),
            id: text('Record id.'),
            title: text('Title.'),
            contributors: strings('Contributors (voices, for an Atlas record).'),
            ring: RingSchema,
            date: CalendarDateOutSchema,
            href: text('Where to read it.'),
          }),
        )
        .describe('Works whose lineage names the concept and Atlas records whose cluster is the concept, oldest first.'),
      contributors: z
        .array(z.strictObject({ name: text('Contributor.'), works: count('Works.'), divergences: count('Atlas records.'), total: count('Both.') }))
        .describe('Contributor breakdown of the spine, most first.'),
      counts: z
        .strictObject({
          works: count('Works.'),
          divergences: count('Atlas records.'),
          contributors: count('Contributors.'),
          related: count('Related concepts.'),
          tensions_open: count('Open tensions.'),
          tensions_repaired: count('Repaired tensions.'),
        })
        .describe('Counts of this view.'),
      tensions: z
        .strictObject({
          open: z.array(LineageTensionSchema).describe('Open tensions.'),
          repaired: z.array(LineageTensionSchema).describe('Repaired tensions.'),
        })
        .describe('Tensions sighted on the Atlas records of the spine.'),
      note: text('How the view is derived.'),
    })
    .describe('Concept lineage (GET /api/lineage; also the lineage of /concepts/<id>.json).'),
);
export type Lineage = z.infer<typeof LineageSchema>;

export const ConceptCardSchema = named(
  'ConceptCard',
  ConceptNodeSchema.extend({
    related: strings('Related concept ids.'),
    body: text('Card text (Markdown).'),
    html: text('Card text rendered as HTML.'),
    markdown_url: text('Markdown twin.'),
    json_url: text('JSON twin.'),
    lineage: LineageSchema,
  }).describe('One concept card, with its lineage (the same view as GET /api/lineage).'),
);
export type ConceptCard = z.infer<typeof ConceptCardSchema>;

export const AudioManifestSchema = named(
  'AudioManifest',
  z
    .strictObject({
      tracks: z
        .array(
          z.strictObject({
            slug: text('Track slug; the transcript is /audio/<slug>.txt.'),
            title: text('Title.'),
            duration_seconds: z.number().int().positive().describe('Duration in seconds.'),
            date: CalendarDateOutSchema,
            contributors: strings('Contributors.'),
            description: z.string().optional().describe('Description.'),
            stream_url: z.string().nullable().describe('Stream URL, or null when the track has no audio file in this deployment.'),
            transcript_url: text('Draft transcript of the track.'),
          }),
        )
        .describe('Track list.'),
      total_duration_seconds: count('Sum of the durations.'),
      note: text('Explanatory text.'),
    })
    .describe('Audio manifest: track list, durations, stream URLs and a transcript URL per track.'),
);
export type AudioManifest = z.infer<typeof AudioManifestSchema>;

export const ClaimsDocumentSchema = named(
  'ClaimsDocument',
  z
    .strictObject({
      claims: z
        .array(
          ClaimSchema.extend({
            id: ClaimSchema.shape.id.describe('Claim id (slug).'),
            claim: ClaimSchema.shape.claim.describe('The claim.'),
            status: ClaimSchema.shape.status.describe('measured, supported, preliminary or retracted.'),
            evidence: ClaimSchema.shape.evidence.describe('The evidence for it.'),
            measured_at: ClaimSchema.shape.measured_at.describe('When it was measured.'),
            source: ClaimSchema.shape.source.describe('Where the measurement lives.'),
          }).describe('A claim with its status and evidence.'),
        )
        .describe('Measured and provisional claims.'),
      note: text('Explanatory text.'),
    })
    .describe('Measured claims, including evidence that undifferentiated retrieval can hurt answers.'),
);
export type ClaimsDocument = z.infer<typeof ClaimsDocumentSchema>;

export const WorkDocumentSchema = named(
  'WorkDocument',
  z
    .strictObject({
      id: z.string().min(1).describe(RECORD_ID_NOTE),
      title: text('Title.'),
      ring: RingSchema,
      type: text('Free-form kind.'),
      layer: ContentLayerSchema.exclude(['divergence']).describe('research, canon or realms.'),
      evidence: EvidenceSchema,
      contributors: strings('Contributors.'),
      date: CalendarDateOutSchema,
      excerpt: text('Shortened text.'),
      words: count('Word count.'),
      lineage: strings('Concept ids this work belongs to.'),
      source_url: z.string().optional().describe('Source URL.'),
      media: z
        .strictObject({ url: z.string().optional().describe('Media URL.'), duration_seconds: z.number().int().nonnegative().optional().describe('Duration.') })
        .optional()
        .describe('Media of an oral or video record.'),
      provenance: z
        .strictObject({
          identity: text('Declared identity of the contributor.'),
          justification: z.string().optional().describe('Why it was contributed.'),
          submitted_at: text('When it was submitted.'),
          approved_at: z.string().optional().describe('When a curator approved it.'),
          approved_by: z.string().optional().describe('Who approved it.'),
        })
        .optional()
        .describe('Set on works that entered through a reviewed contribution.'),
      origin: z.enum(['seed', 'proposal']).describe('seed (content/works) or proposal (an approved contribution).'),
      markdown_url: text('Markdown twin.'),
      json_url: text('JSON twin.'),
      text: text('Full text (Markdown).'),
      html: text('Full text rendered as HTML.'),
      history: RecordHistorySchema.optional().describe(
        "This work's revisions from the content's git history, newest first (issue 45; docs/CHANGES.md); absent from artifacts built before the history was recorded.",
      ),
    })
    .describe('A corpus work at /records/<id>.json.'),
);
export type WorkDocument = z.infer<typeof WorkDocumentSchema>;

export const DivergenceDocumentSchema = named(
  'DivergenceDocument',
  z
    .strictObject({ ...fullFields, synthesis_html: z.string().optional().describe('Synthesis rendered as HTML.') })
    .describe('A divergence record at /records/<id>.json: the full record plus the rendered synthesis.'),
);
export type DivergenceDocument = z.infer<typeof DivergenceDocumentSchema>;

export const OpenApiDocumentSchema = named(
  'OpenApiDocument',
  z
    .looseObject({
      openapi: z.literal('3.1.0').describe('Version of the interface description format.'),
      info: z.looseObject({ title: text('Title.'), version: text('Interface version (5.2.0).') }).describe('Title and interface version.'),
      paths: z.record(z.string(), z.unknown()).describe('Every path the service answers.'),
      components: z.record(z.string(), z.unknown()).describe('Schemas and security schemes.'),
    })
    .describe('This document.'),
);
export type OpenApiDocument = z.infer<typeof OpenApiDocumentSchema>;
