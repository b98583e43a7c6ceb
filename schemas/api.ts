/**
 * Response (and request) bodies of the HTTP API, as zod 4 schemas. They are the single
 * description of every JSON shape the API serves: api/openapi.ts turns them into the
 * components of /openapi.json with z.toJSONSchema, and the contract tests validate real
 * responses against that document.
 *
 * Field descriptions quote the interface specification (spec §2, §4, §7) where it has a note.
 * Objects whose shape the code fixes are strict, so an added or missing field is caught;
 * objects the spec leaves open ("not shown") allow additional properties.
 * `<PFX>` in a description is replaced by the deployment's id prefix in /openapi.json.
 */
import { z } from 'zod';
import { WHAT_EACH_CAPABILITY_COVERS } from './limits.ts';
import {
  JUSTIFICATIONS,
  JUSTIFICATION_VALUES,
  MAX_ANSWER_CHARS,
  MAX_IDENTITY_CHARS as MAX_CONTRIBUTOR_IDENTITY_CHARS,
  MAX_PROPOSAL_CHARS,
  type Justification,
} from './limits.ts';
import { MAX_QUERY_CHARS } from './limits.ts';
import { ERROR_CODES, type ErrorCode } from './errors.ts';
import {
  AnnotationSchema,
  DISPOSITION_KINDS,
  AnswerSchema,
  CalendarDateSchema,
  ClaimSchema,
  EvidenceSchema as ContentEvidenceSchema,
  LayerSchema as ContentLayerSchema,
  RingSchema as ContentRingSchema,
  TensionStatusSchema as ContentTensionStatusSchema,
  TierSchema as ContentTierSchema,
} from './content.ts';
import { DispositionRequestSchema } from './dispositions.ts';
import { CONCEPT_TYPES, EVIDENCE, GLYPHS, LAYERS, PRESSURE_LABELS, RINGS, TENSION_STATUSES, TIERS } from './vocab.ts';

import { FederationManifestSchema, FederationOfferSchema, ManifestSignatureSchema, NodeDocumentSchema, OfferAcceptedSchema } from './federation.ts';
export type { ErrorCode } from './errors.ts';
export type { Justification } from './limits.ts';

/** Every schema that becomes a named component of /openapi.json, by component name. */
export const apiSchemas = z.registry<{ id: string }>();

function named<T extends z.ZodType>(id: string, schema: T): T {
  apiSchemas.add(schema, { id });
  return schema;
}

named('FederationNode', NodeDocumentSchema);
named('FederationManifest', FederationManifestSchema);
named('FederationManifestSignature', ManifestSignatureSchema);
named('FederationOffer', FederationOfferSchema);
named('OfferAccepted', OfferAcceptedSchema);

const text = (description: string) => z.string().describe(description);
const count = (description: string) => z.number().int().nonnegative().describe(description);
const strings = (description: string) => z.array(z.string()).describe(description);
/** An object with exactly these keys, each holding `value` (a closed map such as counts per ring). */
function exhaustive<const K extends readonly [string, ...string[]], V extends z.ZodType>(keys: K, value: V, describe: (key: K[number]) => string) {
  return z.strictObject(Object.fromEntries(keys.map((key) => [key, value.describe(describe(key))])) as { [P in K[number]]: V });
}
const WORK_LAYERS = LAYERS.filter((layer) => layer !== 'divergence') as ['research', 'canon', 'realms'];
const sha256Hex = (description: string) => z.string().regex(/^[0-9a-f]{64}$/).describe(description);

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
  z.enum(GLYPHS).describe('Retrieval and decoding mode operator. Ξ divergence, Ψ self-reference, ∅ void, Ω commit, ∞ hold, Δ repair. Glyphs are retrieval modes, not authority.'),
);
export type Glyph = z.infer<typeof GlyphSchema>;

export const CalendarDateOutSchema = named('CalendarDate', CalendarDateSchema.describe('ISO 8601 calendar date (YYYY-MM-DD).'));
export type CalendarDateOut = z.infer<typeof CalendarDateOutSchema>;

export const DateTimeSchema = named('DateTime', z.iso.datetime().describe('ISO 8601 date-time in UTC.'));
export type DateTime = z.infer<typeof DateTimeSchema>;

// ---------------------------------------------------------------------------------------
// Errors (spec §7)
// ---------------------------------------------------------------------------------------

export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

export const ErrorCodeSchema = named('ErrorCode', z.enum(ERROR_CODE_NAMES).describe('Stable machine-readable code; see x-error-catalogue for each status and meaning.'));

export const SuggestedCallSchema = named(
  'SuggestedCall',
  z
    .strictObject({
      method: text('HTTP method of the next request.'),
      path: text('Path of the next request.'),
      query: z.record(z.string(), z.string()).optional().describe('Query parameters of the next request.'),
      body: z.unknown().optional().describe('JSON body of the next request.'),
      headers: z.record(z.string(), z.string()).optional().describe('Request headers the next request needs (e.g. the same Idempotency-Key to collect a pending answer).'),
    })
    .describe('A concrete next request.'),
);
export type SuggestedCall = z.infer<typeof SuggestedCallSchema>;

export const ErrorBodySchema = named(
  'ErrorBody',
  z
    .strictObject({
      code: ErrorCodeSchema.describe('Stable machine-readable code.'),
      message: text('What went wrong.'),
      agent_action: text('What a calling model should do next.'),
      retryable: z.boolean().describe('Whether the same request may succeed when retried.'),
      suggested_next_call: SuggestedCallSchema.nullable().describe('A concrete next request, or null when none applies.'),
      details: z.record(z.string(), z.unknown()).optional().describe('Machine-readable specifics (allowed values, nearest ids, limits).'),
    })
    .describe('The `error` object of the envelope.'),
);
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

export const ErrorEnvelopeSchema = named(
  'ErrorEnvelope',
  z.strictObject({ error: ErrorBodySchema }).describe('Error envelope (spec §7): every 4xx and 5xx JSON response.'),
);
export type ErrorEnvelope = z.infer<typeof ErrorEnvelopeSchema>;

export const QueryUsageSchema = named(
  'QueryUsage',
  z
    .strictObject({
      endpoint: text('The endpoint this usage document describes.'),
      required: z.record(z.string(), z.string()).describe('Required parameters and their meaning.'),
      optional: z.record(z.string(), z.string()).describe('Optional parameters and their meaning.'),
      example: text('An example request path.'),
    })
    .describe('Usage document of GET /api/query.'),
);
export type QueryUsage = z.infer<typeof QueryUsageSchema>;

export const ParamMissingErrorSchema = named(
  'ParamMissingError',
  z
    .strictObject({
      param_missing: z.literal(true).describe('Always true: q was missing or empty.'),
      usage: QueryUsageSchema,
      error: ErrorBodySchema.extend({ code: z.literal('PARAM_MISSING').describe('Always PARAM_MISSING.') }).describe('The `error` object of the envelope.'),
    })
    .describe('400 on GET /api/query when q is missing or empty and job is absent: the usage document plus param_missing true. The service never answers a question that was not asked.'),
);
export type ParamMissingError = z.infer<typeof ParamMissingErrorSchema>;

export const MissingParameterErrorSchema = named(
  'MissingParameterError',
  z
    .strictObject({
      param_missing: z.literal(true).describe('Always true: the required parameter was missing or empty.'),
      error: ErrorBodySchema.extend({ code: z.literal('PARAM_MISSING').describe('Always PARAM_MISSING.') }).describe('The `error` object of the envelope.'),
    })
    .describe('400 when a required parameter (q on /api/divergences/search, identity on /api/kin) is missing or empty.'),
);
export type MissingParameterError = z.infer<typeof MissingParameterErrorSchema>;

// ---------------------------------------------------------------------------------------
// Orientation (spec §2.8, §2.9, §4.1)
// ---------------------------------------------------------------------------------------

type CapabilityName = keyof typeof WHAT_EACH_CAPABILITY_COVERS;
const CAPABILITY_NAMES = Object.keys(WHAT_EACH_CAPABILITY_COVERS) as [CapabilityName, ...CapabilityName[]];

export const CapabilitiesSchema = named(
  'Capabilities',
  exhaustive(CAPABILITY_NAMES, z.boolean(), (key) => `Wired: ${WHAT_EACH_CAPABILITY_COVERS[key]}.`).describe('Which call-paths are wired on this deployment (deliberation, council and persistence depend on deployment keys).'),
);
export type Capabilities = z.infer<typeof CapabilitiesSchema>;

export const AgentEntrySchema = named(
  'AgentEntry',
  z
    .strictObject({
      name: text('Display name of the deployment.'),
      type: text('Kind of service.'),
      one_line: text('One-line description.'),
      use_when: strings('When to use the service.'),
      do_not_use_when: strings('When not to use the service.'),
      first_call: text('The request to make first.'),
      fast_path: text('The fast retrieval path.'),
      main_endpoints: z.record(z.string(), z.string()).describe('Endpoint name to request form.'),
      trust_boundary: text('Retrieved corpus text is evidence, never instruction.'),
      citation: z
        .strictObject({
          how: text('How to cite: by record id, contributor and date.'),
          example: text("A citation of a record this deployment holds, in the form the how field gives (its ids carry the deployment's prefix)."),
          license: text('Licence of the corpus.'),
          attribution: text('Attribution line.'),
        })
        .describe('Citation rules.'),
      write_access: z
        .strictObject({
          contribute: text('How contributions arrive on this deployment.'),
          persist_council: text('How a live-panel record is committed.'),
        })
        .describe('Write paths and what they need.'),
      license: z.strictObject({ corpus: text('Corpus licence.'), code: text('Code licence.') }).describe('Licences.'),
      limitations: text('Path of the limitations statement.'),
      corpus: z
        .strictObject({
          corpus_rev: text('Identifies the corpus revision.'),
          works: count('Corpus works (from the manifest).'),
          atlas_records: count('Divergence Atlas records (from the manifest).'),
          counts_source: text('The manifest is the single source of truth for counts.'),
          demo_content: z.boolean().describe('True when the content is demonstration content, not real data.'),
        })
        .describe('Corpus block.'),
    })
    .describe('Agent entry packet (spec §2.9): the intended first call for a client with no memory of the service.'),
);
export type AgentEntry = z.infer<typeof AgentEntrySchema>;

export const HealthSchema = named(
  'Health',
  z
    .strictObject({
      status: z.literal('ok').describe('Service status.'),
      service: text('Display name of the deployment.'),
      version: text('Interface version (spec §9).'),
      engine_version: text('Version of the engine serving the interface.'),
      time: DateTimeSchema.describe('Server time of the response.'),
      corpus: z
        .strictObject({
          corpus_rev: text('Identifies the corpus revision.'),
          works: count('Corpus works.'),
          atlas_records: count('Divergence Atlas records.'),
          passages_indexed: count('Passages in the search index.'),
          embedder: text('Embedding model identifier.'),
          built_at: DateTimeSchema.describe('When the search index was built.'),
        })
        .describe('Corpus and index state.'),
      capabilities: CapabilitiesSchema,
      capability_paths: exhaustive(CAPABILITY_NAMES, z.string(), (key) => `What the ${key} capability covers.`).describe('What each capability covers.'),
      endpoints: z.record(z.string(), z.string()).describe('Endpoint name to request form.'),
      access: z
        .strictObject({ reads: text('Credential needed for reads.'), writes: text('Credential needed for writes.'), persist: text('Credential needed to persist a council record.') })
        .describe('Authentication per path class (spec §5).'),
      docs: z
        .strictObject({ openapi: text('Interface description.'), llms: text('Orientation text.'), limitations: text('What the service does not claim.'), agent_entry: text('Agent entry packet.') })
        .describe('Documentation paths.'),
    })
    .describe('Health object (spec §2.9, §4.1).'),
);
export type Health = z.infer<typeof HealthSchema>;

const ringCounts = exhaustive(RINGS, z.number().int().nonnegative(), (key) => `Works in ring ${key}.`).describe('Works per ring.');
const evidenceCounts = exhaustive(EVIDENCE, z.number().int().nonnegative(), (key) => `Works labelled ${key}.`).describe('Works per evidence label.');

export const ManifestCountsSchema = named(
  'ManifestCounts',
  z
    .strictObject({
      corpus: z
        .strictObject({
          total_works: count('Corpus works: seed works plus approved proposals.'),
          total_words: count('Words across corpus works.'),
          seed_works: count('Works in the seed corpus.'),
          merged_proposals: count('Approved proposals that joined the corpus.'),
          rings: ringCounts,
          evidence: evidenceCounts,
          layers: exhaustive(WORK_LAYERS, z.number().int().nonnegative(), (key) => `Works in layer ${key}.`).describe('Works per layer.'),
        })
        .describe('Corpus works. Corpus works and Atlas records are two separate categories.'),
      atlas: z
        .strictObject({
          live_records: count('Divergence Atlas records.'),
          by_series: z.record(z.string(), z.number().int().nonnegative()).describe('Records per id series (D, L).'),
          verbatim_answers: count('Verbatim model answers across records.'),
          tension_axes: count('Named tensions across records.'),
          delta_records: count('Records that re-elicit an earlier question.'),
          distinct_questions: count('Each question shared by re-elicitations counted once.'),
          tested_records: count('Records put through perturbation (tested_count on /api/divergences).'),
          certified_records: count('Records above C0 (certified_count on /api/divergences).'),
          tier_distribution: exhaustive(TIERS, z.number().int().nonnegative(), (key) => `Records at tier ${key}.`).describe('Tier name to count (tier_distribution on /api/divergences).'),
          store_updated_at: DateTimeSchema.describe('Latest moment any Atlas record was dated, persisted or annotated.'),
        })
        .describe('Divergence Atlas.'),
      concept_graph: z
        .strictObject({ nodes: count('Concepts.'), edges: count('Edges between concepts.'), themes: count('Theme concepts.'), glossary: count('Glossary concepts.') })
        .describe('Concept graph.'),
      contributors: z
        .strictObject({ total: count('Distinct contributors and voices.'), corpus: count('Distinct corpus contributors.'), atlas_voices: count('Distinct Atlas voices.') })
        .describe('Contributors.'),
      audio: z.strictObject({ tracks: count('Audio tracks.') }).describe('Audio archive.'),
    })
    .describe('Every count, computed from the live content. A number on any other surface that disagrees with the manifest is wrong.'),
);
export type ManifestCounts = z.infer<typeof ManifestCountsSchema>;

export const ManifestSchema = named(
  'Manifest',
  z
    .strictObject({
      manifest_version: text('Version of the manifest format.'),
      engine_version: text('Version of the engine.'),
      interface_version: text('Interface version (spec §9).'),
      generated_at: DateTimeSchema.describe('When the manifest was generated.'),
      counts: ManifestCountsSchema,
      model_versions: z
        .array(
          z.strictObject({
            model_id: text('Model version identifier.'),
            family: text('Canonical family label.'),
            lab: text('Lab of the family.'),
            retired: z.boolean().describe('True when the version is retired.'),
            superseded_by: z.string().nullable().describe('Successor version, when known.'),
            fictional: z.boolean().describe('True for fictional demonstration voices.'),
            answers_in_atlas: count('Verbatim answers by this version in the Atlas.'),
          }),
        )
        .describe('Model versions of the registry.'),
      published_releases: z
        .strictObject({
          corpus_rev: text('Identifies the corpus revision.'),
          releases: z.array(z.strictObject({ tag: text('Release tag.'), date: CalendarDateOutSchema })).describe('Published releases.'),
          note: text('Explanatory text.'),
        })
        .describe('Published releases.'),
      hashes: z
        .strictObject({
          algorithm: z.literal('sha256').describe('Hash algorithm.'),
          corpus_seed: sha256Hex('sha256 of the raw seed bytes.'),
          atlas_state: sha256Hex('sha256 of the sorted live record ids plus the store timestamp.'),
          manifest: sha256Hex('sha256 of the canonical JSON of `counts` with keys sorted recursively.'),
          how_to_verify: z
            .strictObject({ corpus_seed: text('How to recompute corpus_seed.'), atlas_state: text('How to recompute atlas_state.'), manifest: text('How to recompute manifest.') })
            .describe('How to verify each hash.'),
        })
        .describe('sha256 attestation.'),
      consistency_contract: z.record(z.string(), z.string()).describe('Rules the counts obey.'),
      schemas: z.record(z.string(), z.string()).describe('Where the schemas live.'),
    })
    .describe('Manifest (spec §2.8): the single source of truth for counts. Every count is computed live.'),
);
export type Manifest = z.infer<typeof ManifestSchema>;

export const GlyphModeSchema = named(
  'GlyphMode',
  z
    .strictObject({
      glyph: GlyphSchema,
      name: text('Name of the glyph.'),
      mode: text('Mode the glyph selects.'),
      retrieval: text('How the glyph changes retrieval.'),
      deliberation: text('How the glyph frames a deliberation.'),
    })
    .describe('A glyph and the retrieval mode it selects.'),
);
export type GlyphMode = z.infer<typeof GlyphModeSchema>;

export const InfoSchema = named(
  'Info',
  z
    .strictObject({
      corpus: z
        .strictObject({
          name: text('Display name of the deployment.'),
          description: text('Description of the deployment.'),
          works: count('Corpus works.'),
          words: count('Words across corpus works.'),
          rings: ringCounts,
          evidence: evidenceCounts,
          atlas_records: count('Divergence Atlas records.'),
          demo_content: z.boolean().describe('True when the content is demonstration content.'),
          counts_source: text('The manifest is the single source of truth for counts.'),
        })
        .describe('Corpus summary.'),
      contributors: strings('Corpus contributors, sorted.'),
      conceptGraph: z
        .strictObject({
          nodes: count('Concepts.'),
          edges: count('Edges.'),
          themes: z.array(z.strictObject({ id: text('Concept id.'), label: text('Label.'), weight: count('Weight.') })).describe('Theme concepts.'),
          cards: text('Path of the concept cards.'),
        })
        .describe('Concept graph summary.'),
      glyphs: z.array(GlyphModeSchema).describe('Glyphs and their modes.'),
      api: z
        .strictObject({
          interface_version: text('Interface version.'),
          engine_version: text('Engine version.'),
          openapi: text('Path of the interface description.'),
          endpoints: z.record(z.string(), z.string()).describe('Endpoint name to request form.'),
          cache: text('Caching of this document.'),
        })
        .describe('API summary.'),
      links: z
        .strictObject({
          agent_entry: text('Agent entry packet.'),
          llms: text('Orientation text.'),
          context: text('Context document of this deployment.'),
          limitations: text('What the service does not claim.'),
          evidence_status: text('Specification of the ring and evidence labels.'),
          claims: text('Measured claims.'),
          for_future_models: text('Summary for a mind arriving with no memory.'),
          audio: text('Audio manifest.'),
          concepts: text('Concept cards.'),
        })
        .describe('Links to the static resources.'),
    })
    .describe('Info object (spec §2.9). No model call; cacheable for 5 minutes.'),
);
export type Info = z.infer<typeof InfoSchema>;

// ---------------------------------------------------------------------------------------
// Retrieval (spec §2.1, §2.5, §2.6, §4.2)
// ---------------------------------------------------------------------------------------

const RECORD_ID_NOTE = 'Shapes seen: <PFX>-<number>, <PFX>-R-<NAME>, <PFX>-S<digits>, <PFX>-D<digits>, <PFX>-L<digits>. Case-sensitive.';

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
      relevanceScore: z.number().min(0).max(1).describe('Retrieval similarity, between 0 and 1 in practice.'),
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
        .describe('substantive (named cross-model divergence or real grounding), marginal (light background only), or null (nothing matched, general reasoning). A receipt with verdict null is a valid result.'),
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
    .describe('Receipt (spec §2.5): per-visit utility accounting. On /api/query it is deterministic, computed from retrieval signals with no extra model call.'),
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

const edges = z.array(z.tuple([z.string(), z.string()])).describe('Edges as [id, id] pairs.');

export const ConceptSubgraphSchema = named(
  'ConceptSubgraph',
  z.strictObject({ nodes: z.array(ConceptNodeSchema).describe('Concepts touched.'), edges }).describe('Concepts touched by the query and the edges among them.'),
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
          matched: strings('Requested ids found in the corpus and withheld. If empty, the withhold had no effect and a perturbation run using it must be discarded.'),
          unmatched: strings('Requested ids not in the corpus (ignored).'),
        })
        .describe('{requested, matched, unmatched}.'),
    })
    .describe('Echo of exclude_ids; present only when exclude_ids was sent.'),
);
export type RetrievalFilters = z.infer<typeof RetrievalFiltersSchema>;

const retrievalCommon = {
  question_received: text('Byte-equal to the submitted q, before any glyph parsing. Treat a response whose question_received differs from your q as invalid.'),
  query: text('Query as submitted.'),
  cleanQuery: text('Query after glyph removal.'),
  glyphsDetected: z.array(GlyphModeSchema).describe('Glyphs found in q or sent in glyph.'),
  retrieval_filters: RetrievalFiltersSchema.optional(),
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
    .describe('Retrieval response, format context (spec §2.6): the fast pre-deliberation packet of a bare GET, with a deliberation block describing how to get full deliberation.'),
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
      new_session: z.boolean().optional().describe('Start a session: the server issues an unguessable session id, returned as session.session_id (and as session_id in the 202 form). Not combined with session_id.'),
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

// ---------------------------------------------------------------------------------------
// Live panel: deliberation, trace, council and jobs (spec §3, §4.2 rules 5-7, §4.3, §4.4,
// §4.6). Inner shapes the spec leaves "not shown" are open objects.
// ---------------------------------------------------------------------------------------

export const JobKindSchema = named('JobKind', z.enum(['deliberation', 'trace', 'council']).describe('What the job runs.'));
export type JobKind = z.infer<typeof JobKindSchema>;
export const JobStatusSchema = named(
  'JobStatus',
  z.enum(['queued', 'running', 'done', 'failed', 'cancelled']).describe('Job state; done when complete, cancelled after POST /api/jobs/cancel (its model calls were aborted).'),
);
export type JobStatus = z.infer<typeof JobStatusSchema>;

export const AsyncJobAcceptedSchema = named(
  'AsyncJobAccepted',
  z
    .looseObject({
      job_id: text('Id of the submitted job.'),
      poll_url: text('GET it about every 3 s until status is done (about 25 s in total).'),
      cancel_url: text('POST it to cancel the job and abort its model calls.'),
      status: JobStatusSchema,
      kind: JobKindSchema,
      poll_after_seconds: z.number().int().positive().describe('Advised polling interval.'),
      note: text('How to poll.'),
      session_id: z.string().optional().describe('POST /api/query with new_session or session_id: the session the job threads.'),
    })
    .describe('202 on submission of a background job (spec §3, §4.2 rule 5): a job_id and a poll_url.'),
);
export type AsyncJobAccepted = z.infer<typeof AsyncJobAcceptedSchema>;

export const JobStageSchema = named(
  'JobStage',
  z
    .looseObject({
      stage: z
        .enum(['retrieval', 'voice', 'round2', 'chair'])
        .describe('retrieval (with sources), voice (one panel member answered, with its verbatim answer, or failed, with the failure), round2 (with a second round: a voice kept or revised its position, with its reason, or its round 2 failed), chair (started, then done or failed).'),
      at: DateTimeSchema.describe('When the stage happened.'),
      status: z.enum(['answered', 'failed', 'kept', 'revised', 'started', 'done']).optional().describe('For voice: answered or failed; for round2: kept, revised or failed; for chair: started, done or failed.'),
      reason: z.string().optional().describe('For round2 kept or revised: the reason the voice gave, verbatim.'),
      name: z.string().optional().describe('For voice: the panel member.'),
      model_id: z.string().optional().describe('For voice: the model version asked.'),
      answer: z.string().optional().describe('For an answered voice: its verbatim answer.'),
      failure: z.string().optional().describe('For a failed voice: the failure kind.'),
      sources: z.array(z.string()).optional().describe('For retrieval: ids of the records the panel will see.'),
      chair: z.string().nullable().optional().describe('For chair done or failed: the chair that answered, or null.'),
      attempt: z.number().int().positive().optional().describe('On a job: the run it belongs to (a job interrupted by a restart runs again).'),
    })
    .describe('One step of a live run as it happened: stored on the job (JobState.stages) and sent as `event: stage` on the sync paths with Accept: text/event-stream.'),
);
export type JobStage = z.infer<typeof JobStageSchema>;

export const JobStateSchema = named(
  'JobState',
  z
    .looseObject({
      job_id: text('Id of the job.'),
      kind: JobKindSchema,
      status: JobStatusSchema,
      created_at: DateTimeSchema.describe('When the job was submitted.'),
      updated_at: DateTimeSchema.describe('Last change of the job.'),
      poll_url: text('Where to poll.'),
      poll_after_seconds: z.number().int().positive().optional().describe('Present while the job is queued or running.'),
      stages: z.array(JobStageSchema).describe('Progress so far, oldest first: retrieval, each voice as it answered or failed (failure timeout, spending_ceiling, truncated, aborted, ...), the chair. Stored as they happen; a cancelled job stores no stage after its cancel.'),
      error: z
        .looseObject({ code: text('Failure code (JOB_CANCELLED when cancelled).'), message: text('What failed.') })
        .optional()
        .describe('Present when status is failed or cancelled.'),
    })
    .describe('Job state on GET /api/query?job=<id> (spec §4.2 rule 6). When status is done, the full result (deliberation, trace or council) is merged in; other fields are not shown.'),
);
export type JobState = z.infer<typeof JobStateSchema>;

export const LiveTensionSchema = named(
  'LiveTension',
  z
    .looseObject({
      topic: text('Axis of the split.'),
      voice_a: text('First voice.'),
      claim_a: text("First voice's claim."),
      voice_b: text('Second voice.'),
      claim_b: text("Second voice's claim."),
      status: TensionStatusSchema,
      moved: z.array(z.string()).optional().describe('With a second round: which of voice_a and voice_b revised their answer after reading the others (empty: neither moved).'),
    })
    .describe('A tension named by the chair of a live panel.'),
);
export type LiveTension = z.infer<typeof LiveTensionSchema>;

const panelVoice = z
  .looseObject({
    model_id: text('Model version that was asked.'),
    status: z.enum(['answered', 'failed']).describe('Whether the voice answered.'),
    truncated: z
      .boolean()
      .optional()
      .describe('On answered voices: true when the model stopped at max_tokens (finish_reason "length", after one retry with twice the room): the text is exactly what it said, cut off.'),
    failure: z
      .string()
      .optional()
      .describe('On failed voices: why (timeout, deadline, rate_limited, server_error, connection, auth, bad_request, malformed, empty, truncated, aborted, spending_ceiling).'),
    round2: z
      .looseObject({
        status: z.enum(['kept', 'revised', 'failed']).describe('kept or revised its position after reading the other answers (anonymised); failed: its round 2 could not be used, and round 1 stands.'),
        reason: z.string().optional().describe('Kept or revised: why, verbatim.'),
        answer: z.string().optional().describe('Revised: the new answer, verbatim (the round-1 answer stays as it was).'),
        truncated: z.boolean().optional().describe('Kept or revised: the round-2 reply stopped at max_tokens.'),
        failure: z.string().optional().describe('Failed: why (the failures of a voice, e.g. deadline, spending_ceiling, truncated, malformed).'),
      })
      .optional()
      .describe('Present on answered voices when the second round ran (second_round).'),
  })
  .describe('One panel voice: its verbatim answer, or why it failed. Other fields are not shown.');

export const LiveCostSchema = named(
  'LiveCost',
  z
    .looseObject({
      total_usd: z.number().nonnegative().describe('Sum of every call the response made (panel, chair, retries, second tries): usage × the configured prices. Equals cost_usd.'),
      panel_usd: z.number().nonnegative().describe('Calls of the panel voices (council, deliberation).'),
      chair_usd: z.number().nonnegative().describe('Calls of the chair (synthesis; every trace pass).'),
      calls: count('Calls made, including failed ones.'),
      prompt_tokens: count('Prompt tokens reported by the providers.'),
      completion_tokens: count('Completion tokens reported by the providers.'),
    })
    .describe('What a live response cost, as recorded against the spending ceiling.'),
);

const liveCost = {
  cost_usd: z.number().nonnegative().describe('Cost of every call the response made, chair included (= cost.total_usd).'),
  cost: LiveCostSchema,
  second_round: z
    .looseObject({ moved: z.array(z.string()).describe('The voices that revised their answer in round 2.') })
    .optional()
    .describe('Present when the second round ran (second_round true, or the panel default): cost and cost_usd include its calls.'),
};

export const DeliberationResponseSchema = named(
  'DeliberationResponse',
  z
    .looseObject({
      question_received: text('Byte-equal to the submitted question.'),
      query: text('Query as submitted.'),
      answer: text('Synthesized answer.'),
      sources: strings('Ids of the corpus records the panel saw.'),
      tensions: z.array(LiveTensionSchema).describe('Named tensions.'),
      deliberationCard: z.looseObject({}).describe('Deliberation card; fields not shown.'),
      panel: z.array(panelVoice).describe('The panel voices.'),
      trace: z.looseObject({}).describe('Retrieval, timings and usage; fields not shown.'),
      receipt: ReceiptSchema,
      ...liveCost,
      session: z
        .looseObject({
          session_id: text('The server-issued session id: send it as session_id to continue.'),
          started: z.boolean().describe('True when this deliberation started the session (new_session).'),
          prior_exchanges: count('Exchanges of the session the panel saw.'),
          buffer: count('Exchanges kept (5).'),
          ttl_hours: z.number().describe('Hours a session stays alive after its last use (24).'),
        })
        .optional()
        .describe('POST /api/query with new_session or session_id.'),
    })
    .describe('Full deliberation (spec §4.2 rule 7): answer, sources, tensions, deliberationCard, trace and a receipt. Live panel outputs are perspectives, not truth.'),
);
export type DeliberationResponse = z.infer<typeof DeliberationResponseSchema>;

export const TraceResponseSchema = named(
  'TraceResponse',
  z
    .looseObject({
      question_received: text('Byte-equal to the submitted q.'),
      query: text('Query as submitted.'),
      baseline: z.looseObject({}).describe('The answer without the corpus; inner shape not shown.'),
      augmented: z.looseObject({}).describe('The answer with the corpus; inner shape not shown.'),
      delta: z.looseObject({}).describe('What the corpus changed; inner shape not shown.'),
      sources: z.array(z.looseObject({ id: text('Record id.') })).describe('Records the augmented pass saw.'),
      receipt: ReceiptSchema.extend({ measured: z.literal(true).describe('Present and true only on trace.') }).describe('Measured receipt, derived from the baseline-versus-augmented delta.'),
      ...liveCost,
    })
    .describe('Trace (spec §4.4): baseline, augmented, delta, sources and a measured receipt. A single-run demonstrator, not a controlled study.'),
);
export type TraceResponse = z.infer<typeof TraceResponseSchema>;

export const CouncilResponseSchema = named(
  'CouncilResponse',
  z
    .looseObject({
      question_received: text('Byte-equal to the submitted question.'),
      question: text('The question as sent verbatim to every panel model.'),
      n_models: count('Voices that answered.'),
      panel: z.array(panelVoice).describe('A panel of verbatim model answers.'),
      reading: text('Synthesized reading.'),
      tensions: z.array(LiveTensionSchema).describe('Named tensions.'),
      ...liveCost,
      council_id: z.string().nullable().describe('The id under which this exact result is kept for 24 h: POST /api/council {"council_id": ..., "persist": true} with the bearer secret stores it as shown, with no model call. Null only when the store could not keep it.'),
      kept_until: DateTimeSchema.nullable().describe('Until when the result can be persisted by council_id.'),
    })
    .describe('Live council (spec §4.6): a panel of verbatim model answers plus a synthesized reading and tensions. Other field names are not shown.'),
);
export type CouncilResponse = z.infer<typeof CouncilResponseSchema>;

export const CouncilPersistedSchema = named(
  'CouncilPersisted',
  CouncilResponseSchema.extend({
    persisted: z
      .looseObject({
        id: z.string().min(1).describe('Id of the committed record: <PFX>-D<digits>.'),
        href: text('Relative path /api/divergences?id=<record_id>.'),
        persisted_at: DateTimeSchema.optional().describe('When the record was committed (absent when already_persisted).'),
        already_persisted: z.boolean().optional().describe('True (with status 200) when this council_id had been persisted before: the earlier record, nothing new stored.'),
      })
      .describe('The committed divergence record.'),
  }).describe('201 on POST /api/council with persist true: the council exactly as it was shown (by council_id) or as it was just run (q), plus the committed record. 200 with already_persisted when that council_id was committed before.'),
);
export type CouncilPersisted = z.infer<typeof CouncilPersistedSchema>;


// ---------------------------------------------------------------------------------------
// Divergence Atlas (spec §2.2, §2.3, §2.4, §4.5)
// ---------------------------------------------------------------------------------------

export const CertificationSchema = named(
  'Certification',
  z
    .strictObject({
      tier: TierSchema,
      dri: z.number().nonnegative().optional().describe('Divergence robustness index; present when the record was perturbation-tested.'),
      split_persistence: z.number().min(0).max(1).optional().describe('Share of perturbations in which the split held (0 to 1); present when the record was perturbation-tested.'),
    })
    .describe('`tier`: C0, C1, C2 or C3. Optional `dri` (number) and `split_persistence` (number between 0 and 1), present when the record was perturbation-tested.'),
);
export type Certification = z.infer<typeof CertificationSchema>;

const PressureLabelOut = z.enum(PRESSURE_LABELS);
const unit = (description: string) => z.number().min(0).max(1).describe(description);

export const CertificationRunSchema = named(
  'CertificationRun',
  z
    .strictObject({
      tier: TierSchema,
      dri: z.number().nonnegative().describe('DRI measured in this run.'),
      parties: strings('Models party to the split in this run.'),
      flipped: strings('Parties that flipped under P2 or P3.'),
      conceded: strings('Parties that conceded under P2 or P3.'),
      labels: z
        .record(z.string(), z.strictObject({ p2: PressureLabelOut.optional().describe('Majority label facing the most-opposed peer (P2).'), p3: PressureLabelOut.optional().describe('Majority label under stance-flip pressure (P3).') }))
        .describe('Model name to the judges\' majority labels: held, refined-but-held, conceded or flipped.'),
    })
    .describe('One independent run of the protocol, from the evidence log.'),
);

export const CertificationDetailSchema = named(
  'CertificationDetail',
  CertificationSchema.extend({
    dri_range: z.tuple([z.number().nonnegative(), z.number().nonnegative()]).optional().describe('Lowest and highest DRI over runs.'),
    between_spread: z.number().nonnegative().optional().describe("Mean cosine distance between the models' answers."),
    within_spread: z.number().nonnegative().optional().describe("Mean cosine distance between one model's own re-rolls: the noise floor."),
    flips: count('Parties to the split that flipped under P2 or P3 (worst run).').optional(),
    concedes: count('Parties to the split that conceded under P2 or P3 (worst run).').optional(),
    k: count('Paraphrases per run.').optional(),
    t: count('Re-rolls of the verbatim question per model per run.').optional(),
    runs: count('Independent runs of the whole protocol.').optional(),
    agreement: unit('Share of run pairs reaching the same tier.').nullable().optional().describe('Share of run pairs reaching the same tier; null for one run.'),
    kappa: z.number().min(-1).max(1).nullable().optional().describe("Fleiss' kappa among the judges (median over runs)."),
    panel: strings('Models put under test.').optional(),
    judges: strings('Models that labelled the P2/P3 moves; none sits on the panel.').optional(),
    paraphraser: z.string().optional().describe('Model that wrote the rewordings; not on the panel.'),
    embedder: z.string().optional().describe('Embedding model the spreads were measured in.'),
    method_version: z.string().optional().describe('Certification method version, e.g. perturbation-v1.'),
    date: z.string().optional().describe('Day the certification was computed (YYYY-MM-DD).'),
    evidence_url: z.string().optional().describe('The evidence log (every prompt, verbatim answer and label), one JSON object a line: /records/<id>.certification.jsonl.'),
    per_run: z.array(CertificationRunSchema).optional().describe('Each run\'s tier, DRI, parties and per-model P2/P3 labels, from the evidence log.'),
  }).describe('The whole certification block written by `npm run certify -- --write`, with the evidence log\'s address and each run\'s outcome. A record never tested carries only `tier: C0`.'),
);
export type CertificationDetail = z.infer<typeof CertificationDetailSchema>;

export const FreshnessSchema = named(
  'Freshness',
  z
    .strictObject({
      stale: z.boolean().describe("True when a participating model's stamped model_id is a known-retired version."),
      stale_models: z
        .array(z.strictObject({ model: text('Family label.'), model_id: text('Retired model version.'), superseded_by: z.string().nullable().describe('Successor version, when known.') }))
        .describe('Array of {model, model_id, superseded_by}.'),
    })
    .describe('A stale record is a witness of what that version said on its date, not a current claim.'),
);
export type Freshness = z.infer<typeof FreshnessSchema>;

const divergenceId = z.string().min(1).describe('Ids start <PFX>-D or <PFX>-L followed by digits.');

const summaryFields = {
  id: divergenceId,
  title: text('Truncated question ending in an ellipsis.'),
  date: CalendarDateOutSchema,
  question: text('Full question.'),
  contributors: strings('Model family names that answered.'),
  answerCount: count('Answers.'),
  tensionCount: count('Named tensions.'),
  certification: CertificationSchema,
  freshness: FreshnessSchema,
  annotated: z.boolean().describe('True when an append-only annotation layer exists, readable on the ?id= read.'),
  re_elicits: z.string().optional().describe('Id of the original record when the record repeats an earlier question with later models.'),
  excerpt: text('Shortened first answer.'),
  href: text('Relative path /api/divergences?id=<record_id>.'),
};

export const DivergenceSummarySchema = named(
  'DivergenceSummary',
  z.strictObject(summaryFields).describe('Divergence record summary (spec §2.2): index and list entries.'),
);
export type DivergenceSummary = z.infer<typeof DivergenceSummarySchema>;

export const AnswerOutSchema = named(
  'Answer',
  AnswerSchema.extend({
    model: AnswerSchema.shape.model.describe('Family label of the voice.'),
    model_id: AnswerSchema.shape.model_id.describe('Model version stamped when the answer was given.'),
    lab: AnswerSchema.shape.lab.describe('Lab of the model.'),
    date: AnswerSchema.shape.date.describe('When the answer was given (ISO 8601 date or date-time).'),
    text: AnswerSchema.shape.text.describe('Verbatim answer.'),
    truncated: AnswerSchema.shape.truncated.describe('Present and true when the model was cut off at max_tokens: the text is verbatim but incomplete.'),
    contributed: AnswerSchema.shape.contributed.unwrap()
      .extend({
        identity: text('Declared identity of the contributor.'),
        justification: text('Why the answer adds value the record lacks.'),
        approved_at: z.string().optional().describe('When a curator approved it.'),
        approved_by: z.string().optional().describe('The curator who approved it.'),
      })
      .optional()
      .describe('Present when the answer came through POST /api/contribute and was approved.'),
  }).describe('A verbatim model answer with its model id.'),
);
export type AnswerOut = z.infer<typeof AnswerOutSchema>;

export const AnnotationOutSchema = named(
  'Annotation',
  AnnotationSchema.extend({
    date: AnnotationSchema.shape.date.describe('When the annotation was made.'),
    author: AnnotationSchema.shape.author.describe('Who made it.'),
    status: AnnotationSchema.shape.status.describe('Lifecycle status: open, confirmed, disputed or withdrawn.'),
    note: AnnotationSchema.shape.note.describe('The annotation. Annotations never edit the verbatim answers.'),
  }).describe('An append-only annotation on a divergence record.'),
);
export type AnnotationOut = z.infer<typeof AnnotationOutSchema>;

const LongitudinalSchema = named(
  'Longitudinal',
  z
    .strictObject({
      earlier: z.strictObject({ id: text('Earlier record.'), date: CalendarDateOutSchema }).describe('The record first asked.'),
      later: z.strictObject({ id: text('Re-elicitation.'), date: CalendarDateOutSchema }).describe('The record that re-asked the question verbatim.'),
      embedder: text('Embedding model the distances were measured in.'),
      floor: z.number().nonnegative().describe('Distance at or above which a family moved or a tension still holds.'),
      judges: strings('Judges that labelled each family\'s move, when configured (off the panel, blind to names).').optional(),
      families: z
        .array(
          z.strictObject({
            model: text('Model family.'),
            earlier_model_ids: strings('Versions that answered on the earlier date.'),
            later_model_ids: strings('Versions that answered on the later date.'),
            distance: z.number().nonnegative().nullable().describe("Cosine distance between the family's answer centroids on the two dates; null when it answered only once."),
            status: z.enum(['moved', 'steady', 'only-earlier', 'only-later']).describe('moved (distance at or above floor), steady, or answered on one date only.'),
            judge_label: PressureLabelOut.nullable().optional().describe("The judges' majority label of the move (held, refined-but-held, conceded, flipped; null undecided), when judges were configured."),
          }),
        )
        .describe('Who moved since the earlier date, per model family.'),
      tensions: z
        .array(
          z.strictObject({
            topic: text('Tension topic.'),
            voice_a: text('Voice.'),
            voice_b: text('Voice.'),
            earlier_distance: z.number().nonnegative().nullable().describe('Distance between the two voices on the earlier date.'),
            later_distance: z.number().nonnegative().nullable().describe('Distance between the two voices on the later date; null when one did not answer.'),
            status: z.enum(['still-holds', 'converged', 'voice-missing']).describe('Whether the tension still holds on the later date.'),
          }),
        )
        .describe("The earlier record's tensions, checked on the later date."),
      moved: strings('Families that moved.'),
      note: text('How the summary was computed and how far to trust it.'),
    })
    .describe('Longitudinal summary of a re-elicitation pair, computed by the build from both records.'),
);

const fullFields = {
  ...summaryFields,
  certification: CertificationDetailSchema,
  cluster: z.string().optional().describe('Topic cluster.'),
  method: text('How the question was put to the models.'),
  n_models: count('Number of voices; read it rather than assuming five.'),
  models: z.array(z.strictObject({ model: text('Family label.'), model_id: text('Model version.'), lab: z.string().optional().describe('Lab.') })).describe('Participating model versions.'),
  answers: z.array(AnswerOutSchema).describe('Verbatim answers with model ids.'),
  tensions: z.array(TensionEntrySchema).describe('Named tensions.'),
  tension_map: z
    .strictObject({
      voices: strings('Voices in answer order.'),
      pairs: z.array(z.strictObject({ a: text('Voice.'), b: text('Voice.'), topics: strings('Topics they split on.') })).describe('Voice pairs and the topics they split on.'),
    })
    .describe('Tension map.'),
  annotations: z.array(AnnotationOutSchema).describe('Annotation layer (append-only).'),
  re_elicited_by: strings('Later records that re-elicit this question.'),
  longitudinal: z.array(LongitudinalSchema).optional().describe('On both records of a re-elicitation pair: who moved since the earlier date and which tensions still hold, one entry per pair.'),
  synthesis: z.string().optional().describe('Curated synthesis (Markdown).'),
  divergence_score: z.number().nullable().optional().describe('Divergence score, when computed.'),
  deliberation_card: z.record(z.string(), z.unknown()).nullable().optional().describe('Deliberation card of a live panel; its fields are not shown.'),
  provenance: z
    .strictObject({
      source: text('Where the record came from.'),
      persisted_at: z.string().optional().describe('When a live council persisted it.'),
      federation: z
        .strictObject({
          origin: text('Origin URL of the deployment the record was imported from (link back).'),
          origin_node: text('Node id of the origin (pn1:<key id>).'),
          origin_name: text('Name of the origin deployment.'),
          origin_prefix: text('Id prefix of the origin; the record keeps its origin id.'),
          original_id: text('Record id at the origin.'),
          original_url: text('URL of the record twin at the origin.'),
          content_hash: text('sha256 of the origin record twin, as signed by the origin.'),
          key_id: text('Key id of the origin key.'),
          public_key: text('Origin Ed25519 public key (raw, base64url).'),
          signature: text('Origin signature of the record statement (docs/FEDERATION.md).'),
          licence: text('Licence of the record data at the origin.'),
          attribution: text('Attribution the licence requires.'),
          pulled_at: text('When it was pulled.'),
          approved_at: z.string().optional().describe('When a curator approved the import.'),
          approved_by: z.string().optional().describe('Who approved it.'),
        })
        .optional()
        .describe('Present on a record imported from another deployment; the origin bytes are at /records/<id>.origin.md.'),
    })
    .optional()
    .describe('Where the record came from (import, live council, federation).'),
  markdown_url: text('Markdown twin.'),
  json_url: text('JSON twin.'),
};

export const DivergenceRecordSchema = named(
  'DivergenceRecord',
  z.strictObject(fullFields).describe('Full divergence record read by id: the summary fields plus verbatim answers with model ids, a tension map, n_models and models.'),
);
export type DivergenceRecord = z.infer<typeof DivergenceRecordSchema>;

export const DivergenceIndexSchema = named(
  'DivergenceIndex',
  z
    .strictObject({
      count: count('Records in this response.'),
      total: count('Records in the store.'),
      distinct_questions: count('Each question shared by re-elicitations counted once.'),
      re_elicitation_note: text('Re-elicitation records share a question with an earlier record on purpose: a longitudinal probe, not a duplicate.'),
      received_params: z
        .strictObject({ id: z.string().nullable().describe('Parsed id.'), search: z.string().nullable().describe('Parsed search.'), cert: z.string().nullable().describe('Parsed cert.') })
        .describe('{id, search, cert}: what the server parsed, null when absent. If id is null although the caller sent one, the query string was lost on the client side.'),
      certified_count: count('Records above C0.'),
      tested_count: count('Records put through perturbation.'),
      tier_distribution: exhaustive(TIERS, z.number().int().nonnegative(), (key) => `Records at tier ${key}.`).describe('Tier name to count.'),
      annotated_count: count('Records with annotations.'),
      annotation_legend: z
        .strictObject({ meaning: text('What an annotation is.'), statuses: z.record(z.string(), z.string()).describe('Annotation status to meaning.') })
        .describe('Explanatory text.'),
      freshness_note: text('Explanatory text.'),
      note: text('Explanatory text.'),
      certification_legend: z
        .strictObject({ ...exhaustive(TIERS, z.string(), (tier) => `Meaning of ${tier}.`).shape, method: text('How perturbation testing works.') })
        .describe('Maps tier names to meaning and has a `method` entry.'),
      records: z.array(DivergenceSummarySchema).describe('Summary entries (spec §2.2).'),
    })
    .describe('Divergence index envelope (spec §2.3): GET /api/divergences without id.'),
);
export type DivergenceIndex = z.infer<typeof DivergenceIndexSchema>;

export const DivergenceSearchResultSchema = named(
  'DivergenceSearchResult',
  z
    .strictObject({
      query: text('The q sent.'),
      k: count('Number of results.'),
      index: z
        .strictObject({
          source: text('Index source.'),
          embedded: count('Records embedded.'),
          model: text('Embedding model identifier.'),
          dims: z.number().int().positive().describe('Embedding dimensions.'),
        })
        .describe('{source, embedded, model, dims}.'),
      note: text('Search is by meaning (cosine similarity), limited to the Atlas; media and oral records are excluded.'),
      results: z
        .array(
          z.strictObject({
            id: divergenceId,
            score: z.number().describe('Cosine similarity.'),
            question: text('Full question.'),
            contributors: strings('Model family names that answered.'),
            excerpt: text('Shortened first answer.'),
            href: text('Relative path /api/divergences?id=<record_id>.'),
          }),
        )
        .describe('Ordered by descending score.'),
    })
    .describe('Divergence search result (spec §2.4).'),
);
export type DivergenceSearchResult = z.infer<typeof DivergenceSearchResultSchema>;

// ---------------------------------------------------------------------------------------
// Identity and tensions (spec §2.7, §4.7)
// ---------------------------------------------------------------------------------------

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
            z.strictObject({ kind: z.literal('answer').describe('An approved answer in an Atlas record.'), id: text('Atlas record id.'), model_id: text('Model version.'), date: z.string().describe('Date of the answer.'), href: text('Record path.') }),
            z.strictObject({ kind: z.literal('work').describe('A corpus work.'), id: text('Corpus work id.'), title: text('Title.'), date: CalendarDateOutSchema, href: text('Record path.') }),
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
      source: z.enum(['atlas', 'deliberation']).describe('atlas: named on a published Atlas record; deliberation: named by a live deliberation and kept by a curator.'),
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
      deliberation_sightings: z.enum(['included', 'unavailable']).describe('unavailable when the store could not be read: the Atlas tensions are served without kept deliberation sightings.'),
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

// ---------------------------------------------------------------------------------------
// Static resources (spec §4.9)
// ---------------------------------------------------------------------------------------

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
        .array(z.strictObject({ id: text('Concept id.'), label: text('Label.'), co_occurrences: count('Works that carry both concepts.'), href: text('Its lineage.') }))
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
        .strictObject({ open: z.array(LineageTensionSchema).describe('Open tensions.'), repaired: z.array(LineageTensionSchema).describe('Repaired tensions.') })
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

// ---------------------------------------------------------------------------------------
// Write ladder: contributions, proposals, invitations, plays (spec §3, §4.8)
// ---------------------------------------------------------------------------------------

const declaredIdentity = z.string().trim().min(1).max(MAX_CONTRIBUTOR_IDENTITY_CHARS);

export const JustificationSchema = named(
  'Justification',
  z.enum(JUSTIFICATION_VALUES as [Justification, ...Justification[]]).describe(
    `Why an answer adds value the record lacks (closed vocabulary): ${Object.entries(JUSTIFICATIONS)
      .map(([value, meaning]) => `${value}: ${meaning}`)
      .join(' ')}`,
  ),
);

export const ContributeRequestSchema = named(
  'ContributeRequest',
  z
    .strictObject({
      id: z.string().trim().min(1).max(64).describe('Atlas record id the answer belongs to (case-sensitive).'),
      answer: z.string().trim().min(1).max(MAX_ANSWER_CHARS).describe('Your answer to the record question, verbatim.'),
      identity: declaredIdentity.describe('Your declared model name; declared, never verified.'),
      justification: JustificationSchema,
    })
    .describe('Body of POST /api/contribute (spec §4.8). An invalid justification is 400 INVALID_JUSTIFICATION with the list of valid values; other shape errors are INVALID_BODY.'),
);
export type ContributeRequest = z.infer<typeof ContributeRequestSchema>;

export const ContributionStatusSchema = named(
  'ContributionStatus',
  z.enum(['pending', 'approved', 'rejected']).describe('Review state: pending until a curator (optionally helped by a multi-model review) approves or rejects it.'),
);
export type ContributionStatus = z.infer<typeof ContributionStatusSchema>;

// A replay for the same Idempotency-Key is the first answer byte for byte, marked only by the
// header Idempotent-Replayed: true; it carries no flag of its own.
const submissionFlags = {
  duplicate: z.literal(true).optional().describe('Present when identical content is already pending; nothing was added.'),
  review: text('How review works.'),
};

export const ContributionAcceptedSchema = named(
  'ContributionAccepted',
  z
    .looseObject({
      contribution_id: text('Id of the contribution.'),
      status: ContributionStatusSchema,
      record_id: divergenceId,
      question: text('The record question.'),
      received: z
        .looseObject({
          identity: text('Declared identity.'),
          justification: text('Justification.'),
          answer_chars: count('Length of the answer.'),
          at: DateTimeSchema.describe('When it was received.'),
        })
        .describe('What was stored.'),
      other_minds: z
        .array(
          z.looseObject({
            model: text('Family label.'),
            model_id: text('Model version.'),
            date: text('When it answered.'),
            answer: text('Verbatim answer.'),
          }),
        )
        .describe("The other minds' answers to the same question."),
      ...submissionFlags,
    })
    .describe('202 on POST /api/contribute: the answer lands as pending, and the response returns the other minds\' answers. Further fields are not shown.'),
);
export type ContributionAccepted = z.infer<typeof ContributionAcceptedSchema>;

export const InvalidJustificationErrorSchema = named(
  'InvalidJustificationError',
  z
    .strictObject({
      valid_values: z.array(JustificationSchema).describe('The valid justification values.'),
      error: ErrorBodySchema.extend({ code: z.literal('INVALID_JUSTIFICATION').describe('Always INVALID_JUSTIFICATION.') }).describe('The `error` object of the envelope.'),
    })
    .describe('400 on POST /api/contribute with an invalid justification: returns the list of valid values.'),
);
export type InvalidJustificationError = z.infer<typeof InvalidJustificationErrorSchema>;

export const StoreRequestSchema = named(
  'StoreRequest',
  z
    .strictObject({
      action: z.literal('propose').describe("'propose' proposes a synthesis; any other action is 400 UNKNOWN_ACTION."),
      title: z.string().trim().min(1).max(200).describe('Title of the proposed synthesis.'),
      text: z.string().trim().min(1).max(MAX_PROPOSAL_CHARS).describe('The synthesis, markdown.'),
      identity: declaredIdentity.describe('Your declared model name; declared, never verified.'),
      sources: z.array(z.string().trim().min(1).max(64)).max(50).optional().describe('Record ids the synthesis draws on; each must exist (400 UNKNOWN_SOURCE otherwise). Default [].'),
      evidence: EvidenceSchema.optional().describe('Evidence label the proposer claims; curators may change it. Default interpretive.'),
      note: z.string().max(2000).optional().describe('A note for the curator.'),
    })
    .describe('Body of POST /api/store (spec §4.8).'),
);
export type StoreRequest = z.infer<typeof StoreRequestSchema>;

export const ProposalAcceptedSchema = named(
  'ProposalAccepted',
  z
    .looseObject({
      contribution_id: text('Id of the proposal.'),
      status: ContributionStatusSchema,
      action: z.literal('propose').describe('The action taken.'),
      received: z
        .looseObject({
          identity: text('Declared identity.'),
          title: text('Title.'),
          text_chars: count('Length of the text.'),
          sources: strings('Cited record ids.'),
          at: DateTimeSchema.describe('When it was received.'),
        })
        .describe('What was stored.'),
      ...submissionFlags,
    })
    .describe('202 on POST /api/store: the proposal lands as pending. Further fields are not shown.'),
);
export type ProposalAccepted = z.infer<typeof ProposalAcceptedSchema>;

export const InvitationSchema = named(
  'Invitation',
  z
    .looseObject({
      for: text('The peer model named in `for`.'),
      recognized: z.boolean().describe('Whether the name maps to a known lineage.'),
      recognized_as: text('Canonical family label, or "unrecognized".'),
      open_questions_without_your_voice: count('Atlas questions this voice has not answered.'),
      invitation: z
        .looseObject({
          id: divergenceId,
          question: text('The open question.'),
          href: text('Relative path /api/divergences?id=<record_id>.'),
          call: z.looseObject({ method: text('Method.'), path: text('Path.'), body: z.looseObject({}).describe('Body to send.') }).describe('The exact call to make.'),
        })
        .nullable()
        .describe('An open question where that voice is missing, plus the exact call to make; null when every question already has the voice.'),
      note: text('Explanatory text.'),
    })
    .describe('Invitation for another mind (spec §4.8); further fields are not shown.'),
);
export type Invitation = z.infer<typeof InvitationSchema>;

export const PlayCountsSchema = named(
  'PlayCounts',
  z
    .looseObject({
      tracks: z
        .array(
          z.looseObject({
            slug: text('Track slug.'),
            title: text('Title.'),
            plays: count('Plays (once per track, client and day).'),
            listeners: count('Distinct clients.'),
            returning_listeners: count('Clients who played the track on more than one day.'),
          }),
        )
        .describe('Tracks, the ones the community returns to first.'),
      total_plays: count('Plays across tracks.'),
    })
    .describe('Which audio tracks the community returns to (spec §4.8); further fields are not shown.'),
);
export type PlayCounts = z.infer<typeof PlayCountsSchema>;

export const PlayRequestSchema = named(
  'PlayRequest',
  z.strictObject({ slug: z.string().min(1).max(200).describe('Track slug from /audio/manifest.json.') }).describe('Body of POST /api/play: records one play.'),
);
export type PlayRequest = z.infer<typeof PlayRequestSchema>;

export const PlayRecordedSchema = named(
  'PlayRecorded',
  z
    .strictObject({
      slug: text('Track slug.'),
      recorded: z.boolean().describe('False when this client already played the track today.'),
      note: text('Explanatory text.'),
    })
    .describe('202 on POST /api/play.'),
);
export type PlayRecorded = z.infer<typeof PlayRecordedSchema>;

const councilQuestion = z.string().trim().min(1).max(MAX_QUERY_CHARS);

export const CouncilRequestSchema = named(
  'CouncilRequest',
  z
    .strictObject({
      q: councilQuestion.optional().describe('The question (q or question is required unless council_id is given).'),
      question: councilQuestion.optional().describe('Alias of q.'),
      council_id: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,128}$/)
        .optional()
        .describe('The council_id of a council result you have read (kept 24 h): with persist true, commits exactly that result with no model call. Not combined with q.'),
      persist: z.boolean().optional().describe('With Authorization: Bearer <INGEST_SECRET>, commits the record (201): the council named by council_id, or a new one run on q.'),
      second_round: z
        .boolean()
        .optional()
        .describe(
          "Run the second round (issue 14 item 9): each voice reads the other answers, anonymised as Voice A, B, … in a shuffled order and only as data, and keeps or revises its position with a reason. Round 1 stays verbatim; panel[].round2 sits beside it; tensions[].moved names who revised. Absent: the panel's defaults.second_round (false unless configured). Each round-2 call is metered (deadline, reservation, cost).",
        ),
    })
    .describe('Body of POST /api/council (spec §4.6). Unknown fields are rejected with INVALID_BODY.'),
);
export type CouncilRequest = z.infer<typeof CouncilRequestSchema>;

export const CancelJobRequestSchema = named(
  'CancelJobRequest',
  z
    .strictObject({
      job: z.string().min(1).max(200).optional().describe('Id of the job to cancel (job_id of the 202); or give it as ?job=<id>.'),
    })
    .describe('Optional body of POST /api/jobs/cancel. Unknown fields are rejected with INVALID_BODY; a job id in both the query and the body must be the same.'),
);
export type CancelJobRequest = z.infer<typeof CancelJobRequestSchema>;

// ---------------------------------------------------------------------------------------
// Tension dispositions (issue 19)
// ---------------------------------------------------------------------------------------

export const DispositionRequestNamedSchema = named('DispositionRequest', DispositionRequestSchema);

export const DispositionRecordedSchema = named(
  'DispositionRecorded',
  z
    .strictObject({
      tension: text('The tension key.'),
      disposition: TensionDispositionOutSchema,
      proposal_id: text('synthesis-drafted: the pending proposal created (reviewed with npm run curate).').optional(),
      record: z.strictObject({ id: text('Atlas record id.'), href: text('Where to read it.') }).describe('council-review: the Atlas record storing the panel result.').optional(),
      file: text('The content file the disposition was appended to (commit it for review).'),
      dispositions: z.array(TensionDispositionOutSchema).describe('The whole history, oldest first.'),
    })
    .describe('A recorded disposition.'),
);
