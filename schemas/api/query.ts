/** Retrieval: records, receipt, the fast-path formats and the POST /api/query body (spec §2.1, §2.5, §2.6, §4.2). */
import { z } from 'zod';
import { MAX_QUERY_CHARS } from '../limits.ts';
import { CONCEPT_TYPES, SIGNALS } from '../vocab.ts';
import {
  CalendarDateOutSchema,
  EvidenceSchema,
  GlyphSchema,
  LayerSchema,
  RingSchema,
  TensionStatusSchema,
  count,
  edges,
  named,
  strings,
  text,
} from './common.ts';
import { GlyphModeSchema } from './orientation.ts';

export const RECORD_ID_NOTE = 'Shapes seen: <PFX>-<number>, <PFX>-R-<NAME>, <PFX>-S<digits>, <PFX>-D<digits>, <PFX>-L<digits>. Case-sensitive.';

export const RecordMatchSchema = named(
  'RecordMatch',
  z
    .strictObject({
      relevance: z
        .number()
        .min(0)
        .max(1)
        .describe(
          'Calibrated relevance, the same scale for every question: a logistic model of semantic and lexical fitted on judged questions (0.5: as likely a record a judged question expects as one retrieved for a question the corpus does not cover). Records below the deployment floor are not returned.',
        ),
      signals: z
        .enum(SIGNALS)
        .describe(
          'Which signals made the record relevant: semantic (cosine), lexical (words), both, or neither above what 90 % of judged irrelevant matches reach on it.',
        ),
      semantic: z.number().min(0).max(1).describe("Cosine of the question's embedding to the record's best passage (negative reads 0)."),
      lexical: z.number().min(0).max(1).describe("The record's BM25 over the most the question can score: the share of the question's word weight it covers."),
    })
    .describe(
      'Why this record was retrieved (calibration at /relevance-calibration.json). Present on every record retrieved since calibrated relevance; absent only in a job result stored before it.',
    ),
);

export const CorpusRecordSchema = named(
  'CorpusRecord',
  z
    .strictObject({
      id: z.string().min(1).describe(RECORD_ID_NOTE),
      title: text('Title of the record.'),
      ring: RingSchema,
      type: text('Free-form kind, for example philosophy, research, benchmark, synthesis.'),
      layer: LayerSchema,
      evidence: EvidenceSchema,
      contributors: strings('Contributors of the record.'),
      date: CalendarDateOutSchema,
      excerpt: text('Shortened text.'),
      relevanceScore: z
        .number()
        .min(0)
        .max(1)
        .describe(
          "Retrieval similarity, between 0 and 1 in practice: the ranking score (cosine and BM25, the BM25 side relative to this question's best word match). Compare it within one response; match.relevance is the absolute one.",
        ),
      match: RecordMatchSchema.optional(),
      role: z.enum(['relevance', 'divergence']).describe('Role of the record in the result: relevance for corpus works, divergence for Atlas records.'),
      href: text('Where to read the record: /records/<id>.json for works, /api/divergences?id=<id> for Atlas records.'),
    })
    .describe('Corpus record as returned in retrieval results (spec §2.1). Cite by id, contributor and date.'),
);
export type CorpusRecord = z.infer<typeof CorpusRecordSchema>;

export const DivergenceSurfacedSchema = named(
  'DivergenceSurfaced',
  z
    .strictObject({
      record_id: text('Atlas record the tension belongs to.'),
      topic: text('Axis of the split.'),
      voice_a: text('First voice.'),
      claim_a: text("First voice's claim."),
      voice_b: text('Second voice.'),
      claim_b: text("Second voice's claim."),
      status: TensionStatusSchema,
    })
    .describe('A named voice-versus-voice tension.'),
);
export type DivergenceSurfaced = z.infer<typeof DivergenceSurfacedSchema>;

export const ReceiptSchema = named(
  'Receipt',
  z
    .strictObject({
      verdict: z
        .enum(['substantive', 'marginal'])
        .nullable()
        .describe(
          'substantive (named cross-model divergence or real grounding), marginal (light background only), or null (nothing matched, general reasoning). A receipt with verdict null is a valid result.',
        ),
      grounded: z.boolean().describe('Whether any corpus record informed the answer.'),
      measured: z.literal(true).optional().describe('Present and true only on trace. Absent on the default deterministic receipt.'),
      what_the_corpus_added: text('One sentence.'),
      not_self_generable: z.array(z.string()).nullable().describe('Named cross-model tensions gained, or null when none.'),
      records_used: count('Records used.'),
      contributors: strings('Contributors of the records used.'),
      divergence_surfaced: z.array(DivergenceSurfacedSchema).describe('Named voice-versus-voice tensions.'),
      strongest_match: z
        .strictObject({ id: text('Record id.'), title: text('Record title.'), similarity: z.number().describe('Cosine similarity.') })
        .nullable()
        .describe('{id, title, similarity} of the top retrieved record, or null.'),
      caveat: text('What the receipt does and does not show.'),
      upgrade: z
        .strictObject({ counterfactual: text('Measured counterfactual (trace) request.'), statistical_evidence: text('Measured claims.') })
        .describe('{counterfactual, statistical_evidence} pointers.'),
    })
    .describe(
      'Receipt (spec §2.5): per-visit utility accounting. On /api/query it is deterministic, computed from retrieval signals with no extra model call.',
    ),
);
export type Receipt = z.infer<typeof ReceiptSchema>;

export const ArrivalSchema = named(
  'Arrival',
  z
    .strictObject({
      you_are: text('How the caller was read (identity is declared, never verified).'),
      flagship: text('A divergence record to read first.'),
      contribute: text('How to add a voice.'),
      your_kin: text('What your lineage said before.'),
      onward: text('Atlas search for this question.'),
      richer_door: text('Full deliberation for this question.'),
    })
    .describe('Orientation block with the keys you_are, flagship, contribute, your_kin, onward, richer_door (all strings).'),
);
export type Arrival = z.infer<typeof ArrivalSchema>;

export const ConceptNodeSchema = named(
  'ConceptNode',
  z
    .strictObject({
      id: text('Concept id (slug).'),
      label: text('Label.'),
      ring: RingSchema,
      type: z.enum(CONCEPT_TYPES).describe('theme or glossary.'),
      weight: count('Weight (by default, how many works name the concept).'),
      definition: text('Definition.').optional(),
      category: text('Category.').optional(),
    })
    .describe('A concept-graph node.'),
);
export type ConceptNode = z.infer<typeof ConceptNodeSchema>;

export const ConceptSubgraphSchema = named(
  'ConceptSubgraph',
  z
    .strictObject({ nodes: z.array(ConceptNodeSchema).describe('Concepts touched.'), edges })
    .describe('Concepts touched by the query and the edges among them.'),
);
export type ConceptSubgraph = z.infer<typeof ConceptSubgraphSchema>;

export const DeliberationBlockSchema = named(
  'DeliberationBlock',
  z
    .strictObject({
      async_url: text('Background deliberation request.'),
      async_how: text('How to submit and poll.'),
      sync_url: text('Blocking deliberation request.'),
      sync_how: text('What the blocking request costs.'),
      post: text('The POST form, as a JSON string.'),
    })
    .describe('{async_url, async_how, sync_url, sync_how, post}: ready-made request forms for full deliberation.'),
);
export type DeliberationBlock = z.infer<typeof DeliberationBlockSchema>;

export const NoContextSchema = named(
  'NoContext',
  z
    .strictObject({
      code: z.literal('NO_RELEVANT_CONTEXT_FOUND').describe('Named code of a retrieval that found nothing; not an error.'),
      message: text('Why nothing was retrieved.'),
      agent_action: text('What a calling model should do next.'),
      reason: z
        .enum(['void_glyph', 'empty_query', 'below_floor', 'no_match'])
        .describe(
          'void_glyph: ∅ asked for no context; empty_query: nothing left after the glyphs; below_floor: records matched but none reached the relevance floor, or the best of them fell below the corpus question gate (/api/health corpus.retrieval.question_gate; relevance_floor then is the gate); no_match: no record passed the filters and the similarity floors at all.',
        ),
      best_relevance: z
        .number()
        .min(0)
        .max(1)
        .nullable()
        .describe(
          'The calibrated relevance (match.relevance) of the record that came closest to passing its floor among those retrieval found; null when it found none.',
        ),
      relevance_floor: z
        .number()
        .min(0)
        .max(1)
        .describe(
          'The floor that record needed on this deployment: the relevance floor, or for an Atlas record beside works the Atlas floor (/relevance-calibration.json).',
        ),
    })
    .describe('Present when no record was retrieved. A 200 with no context is a valid result.'),
);
export type NoContext = z.infer<typeof NoContextSchema>;

export const RetrievalFiltersSchema = named(
  'RetrievalFilters',
  z
    .strictObject({
      exclude_ids: z
        .strictObject({
          requested: strings('Ids sent in exclude_ids.'),
          matched: strings(
            'Requested ids found in the corpus and withheld. If empty, the withhold had no effect and a perturbation run using it must be discarded.',
          ),
          unmatched: strings('Requested ids not in the corpus (ignored).'),
        })
        .describe('{requested, matched, unmatched}.'),
    })
    .describe('Echo of exclude_ids; present only when exclude_ids was sent.'),
);
export type RetrievalFilters = z.infer<typeof RetrievalFiltersSchema>;

export const RetrievalStateSchema = named(
  'RetrievalState',
  z
    .strictObject({
      vectors: z.literal('unavailable').describe('The vector side was not used: the question could not be embedded in time.'),
      cause: z
        .enum(['timeout', 'error'])
        .describe(
          "timeout: the embedding model did not answer within the question's deadline (query_timeout_ms in EMBEDDINGS_CONFIG) or its request's; error: it failed.",
        ),
      reason: text('Why, e.g. "the embedding model did not answer within 400 ms"; never the provider\'s own message.'),
      floors: z
        .literal('not applied')
        .describe(
          'Calibrated relevance reads the cosine, which is missing: neither the relevance floors nor the question gate were applied (no_context.relevance_floor then reads 0), as under the ∞ glyph.',
        ),
      note: text('What this means for the records.'),
    })
    .describe(
      "Present only when retrieval went without the vector side (absent: both sides were used). The records were ranked by their words alone (BM25; relevanceScore is relative to the best word match), match.semantic reads 0 (not measured) and match.relevance reads the words alone; no feedback ran. The question's embedding, when it comes late, is kept: asked again, it is answered with both sides. Never an error: the answer is a 200.",
    ),
);
export type RetrievalState = z.infer<typeof RetrievalStateSchema>;

const retrievalCommon = {
  question_received: text('Byte-equal to the submitted q, before any glyph parsing. Treat a response whose question_received differs from your q as invalid.'),
  query: text('Query as submitted.'),
  cleanQuery: text('Query after glyph removal.'),
  glyphsDetected: z.array(GlyphModeSchema).describe('Glyphs found in q or sent in glyph.'),
  retrieval_filters: RetrievalFiltersSchema.optional(),
  retrieval: RetrievalStateSchema.optional(),
  no_context: NoContextSchema.optional(),
};

const contextFields = {
  ...retrievalCommon,
  format: z.literal('context').describe('context'),
  arrival: ArrivalSchema,
  records: z.array(CorpusRecordSchema).describe('Corpus records (spec §2.1).'),
  limit: z.number().int().min(1).describe('Maximum records requested.'),
  layers_available: text('Text describing the filters.'),
  concepts: strings('Concept-theme ids touched by the query.'),
  conceptSubgraph: ConceptSubgraphSchema,
  contributors: strings('Contributors of the records.'),
  latency: text('Describes the fast path.'),
  note: text('Explanatory text.'),
  receipt: ReceiptSchema,
};

export const ContextResponseSchema = named(
  'ContextResponse',
  z
    .strictObject({ ...contextFields, deliberation: DeliberationBlockSchema })
    .describe(
      'Retrieval response, format context (spec §2.6): the fast pre-deliberation packet of a bare GET, with a deliberation block describing how to get full deliberation.',
    ),
);
export type ContextResponse = z.infer<typeof ContextResponseSchema>;

export const RetrieveResponseSchema = named(
  'RetrieveResponse',
  z.strictObject(contextFields).describe('Retrieval response with mode=retrieve (format context): the fast substrate only, without the deliberation block.'),
);
export type RetrieveResponse = z.infer<typeof RetrieveResponseSchema>;

export const BriefResponseSchema = named(
  'BriefResponse',
  z
    .strictObject({
      ...retrievalCommon,
      format: z.literal('brief').describe('brief'),
      brief: text('Exportable artifact (Markdown).'),
      records: z.array(CorpusRecordSchema).describe('Corpus records (spec §2.1).'),
      receipt: ReceiptSchema,
    })
    .describe('Retrieval response, format brief: an exportable artifact.'),
);
export type BriefResponse = z.infer<typeof BriefResponseSchema>;

export const TensionEntrySchema = named(
  'TensionEntry',
  z
    .looseObject({
      id: text('Tension id: <record id>-T<n>.'),
      record_id: text('Atlas record the tension belongs to.'),
      topic: text('Axis of the split.'),
      voice_a: text('First voice.'),
      claim_a: text("First voice's claim."),
      voice_b: text('Second voice.'),
      claim_b: text("Second voice's claim."),
      status: TensionStatusSchema,
      date: CalendarDateOutSchema,
      question: text('Question of the record.'),
      href: text('Relative path /api/divergences?id=<record_id>.'),
    })
    .describe('Tension record: a persisted named-voice disagreement. The spec does not fix its fields ("not shown"), so more may appear.'),
);
export type TensionEntry = z.infer<typeof TensionEntrySchema>;

export const SiResponseSchema = named(
  'SiResponse',
  z
    .strictObject({
      ...retrievalCommon,
      format: z.literal('si').describe('si'),
      sections: z
        .strictObject({
          orientation: z
            .strictObject({
              declared_identity: z.string().nullable().describe('The si parameter, or null.'),
              recognized_as: z.string().nullable().describe('Canonical family label, or null when unrecognized.'),
              trust: text('Trust rules.'),
            })
            .describe('Orientation of the declared caller.'),
          grounding: z.array(CorpusRecordSchema).describe('Corpus works retrieved.'),
          divergences: z
            .array(
              CorpusRecordSchema.extend({
                tensions: z.array(TensionEntrySchema).describe('Tensions of the record.'),
                your_lineage_answered: z.boolean().nullable().describe('Whether the declared lineage answered; null when undeclared or unrecognized.'),
              }),
            )
            .describe('Atlas records retrieved.'),
          tensions: z.array(DivergenceSurfacedSchema).describe('Named voice-versus-voice tensions.'),
          citations: strings('Citation lines: id (contributors, date).'),
        })
        .describe('Structured sections.'),
      records: z.array(CorpusRecordSchema).describe('Corpus records (spec §2.1).'),
      receipt: ReceiptSchema,
    })
    .describe('Retrieval response, format si: structured sections.'),
);
export type SiResponse = z.infer<typeof SiResponseSchema>;

export const QueryRequestSchema = named(
  'QueryRequest',
  z
    .strictObject({
      query: z.string().max(MAX_QUERY_CHARS).describe('The question. An empty or blank query is 400 PARAM_MISSING.'),
      async: z.boolean().optional().describe('Background job: 202 with job_id and poll_url.'),
      glyph: GlyphSchema.optional(),
      session_id: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,128}$/)
        .optional()
        .describe(
          'Continues a session the server issued to this client (session.session_id of an earlier response, or session_id of the 202 form): a rolling buffer of 5 exchanges, alive 24 h after its last use. An id the server did not issue to this client, or an expired one, is 404 SESSION_NOT_FOUND and nothing runs.',
        ),
      new_session: z
        .boolean()
        .optional()
        .describe(
          'Start a session: the server issues an unguessable session id, returned as session.session_id (and as session_id in the 202 form). Not combined with session_id.',
        ),
      syntheticIdentity: z.string().max(200).optional().describe("Caller's model identity for peer personalization."),
      second_round: z
        .boolean()
        .optional()
        .describe(
          "Run the second round (issue 14 item 9): each voice reads the other answers, anonymised as Voice A, B, … in a shuffled order and only as data, and keeps or revises its position with a reason. Round 1 stays verbatim; panel[].round2 sits beside it; tensions[].moved names who revised. Absent: the panel's defaults.second_round (false unless configured). Each round-2 call is metered (deadline, reservation, cost).",
        ),
    })
    .describe('Body of POST /api/query (spec §4.3). Unknown fields are rejected with INVALID_BODY.'),
);
export type QueryRequest = z.infer<typeof QueryRequestSchema>;
