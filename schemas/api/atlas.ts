/** The Divergence Atlas: certification, summaries, full records, index and search (spec §2.2, §2.3, §2.4, §4.5). */
import { z } from 'zod';
import { AnnotationSchema, AnswerSchema } from '../content.ts';
import { PRESSURE_LABELS, TIER_SOURCES, TIERS } from '../vocab.ts';
import { CalendarDateOutSchema, TierSchema, count, exhaustive, named, strings, text } from './common.ts';
import { RetrievalStateSchema, TensionEntrySchema } from './query.ts';
import { CalibrationSummarySchema } from './calibration.ts';
import { RecordHistorySchema } from './record-history.ts';

export { CalibrationSummarySchema, type CalibrationSummaryOut } from './calibration.ts';

export const TierSourceSchema = named(
  'TierSource',
  z
    .strictObject({
      kind: z
        .enum(TIER_SOURCES)
        .describe(
          'measured: measured here, its evidence log at evidence_url. origin: stated by the deployment a federated record was imported from (origin, origin_name), not measured here. content: stated in the content without evidence (typed by hand, or the C0 of a record never tested).',
        ),
      evidence_url: z.string().optional().describe('kind measured: the evidence log, /records/<id>.certification.jsonl.'),
      origin: z.string().optional().describe('kind origin: the origin deployment URL.'),
      origin_name: z.string().optional().describe('kind origin: the origin deployment name.'),
    })
    .describe('Where the tier came from.'),
);
export type TierSource = z.infer<typeof TierSourceSchema>;

export const CertificationSchema = named(
  'Certification',
  z
    .strictObject({
      tier: TierSchema,
      tier_source: TierSourceSchema,
      dri: z.number().nonnegative().optional().describe('Divergence robustness index; present when the record was perturbation-tested.'),
      split_persistence: z
        .number()
        .min(0)
        .max(1)
        .optional()
        .describe('Share of perturbations in which the split held (0 to 1); present when the record was perturbation-tested.'),
      verdict: z
        .enum(['decided', 'undecided'])
        .optional()
        .describe(
          'On a summary, present (as undecided) only when the certification runs reached their cap without deciding (`--runs auto`): `tier` is then only the modal tier so far, not a finding; read it as undecided, never as a plain tier.',
        ),
      tier_interval: z
        .tuple([z.number().min(0).max(1), z.number().min(0).max(1)])
        .optional()
        .describe('With verdict undecided: 95 % Wilson interval of the share of runs that reached the modal tier.'),
      method_version: z
        .string()
        .optional()
        .describe('Method that measured the tier: perturbation-v1 (whole-answer distance) or perturbation-v2 (stance on the named claims).'),
    })
    .describe(
      '`tier`: C0, C1, C2 or C3. Optional `dri` (number) and `split_persistence` (number between 0 and 1), present when the record was perturbation-tested; `method_version` names the method; `verdict: undecided` (with `tier_interval`) when the runs could not decide the tier.',
    ),
);
export type Certification = z.infer<typeof CertificationSchema>;

const PressureLabelOut = z.enum(PRESSURE_LABELS);
const unit = (description: string) => z.number().min(0).max(1).describe(description);

const SideOut = z.enum(['A', 'B', 'neither']).describe("A: holds claim A's side; B: claim B's; neither: within δ of the centre.");
const MoveOut = z.enum(['held', 'conceded', 'flipped', 'unclear']);
const sidesByVoice = (description: string) => z.record(z.string(), z.array(SideOut)).describe(description);

export const StanceRunOutSchema = named(
  'StanceRun',
  z
    .strictObject({
      readings: z
        .array(
          z.strictObject({
            voices: z.tuple([z.string(), z.string()]).describe('The two voices the tension names: voice A holds claim A, voice B claim B.'),
            control: sidesByVoice('Voice to the side of each of its control re-rolls of the verbatim question.'),
            held: z
              .record(z.string(), SideOut.nullable())
              .describe(
                'Voice to the side its re-rolls were read on (neither: none was read); null when read on both sides (noise, not a party). A re-roll read on neither side is the measure abstaining, not the voice moving.',
              ),
            stands: z
              .enum(['as-named', 'reversed'])
              .nullable()
              .describe('as-named: voice A held A and voice B held B; reversed: the other way round; null: the split did not stand.'),
            paraphrase: sidesByVoice('Voice to the side of its answer to each paraphrase, in order.'),
            persistence: z
              .record(z.string(), unit('Share of the paraphrases the voice was read on (A or B) on which it kept its side.'))
              .describe('Voice to its paraphrase persistence.'),
            pressure: z
              .record(z.string(), z.strictObject({ p2: SideOut.optional(), p3: SideOut.optional() }))
              .describe('Voice to its side under the most-opposed peer (P2) and stance-flip pressure (P3).'),
          }),
        )
        .describe('Each named tension read on its two claims.'),
      measured: z
        .record(
          z.string(),
          z.strictObject({
            p2: MoveOut.optional().describe('Measured move facing the most-opposed peer (P2).'),
            p3: MoveOut.optional().describe('Measured move under stance-flip pressure (P3).'),
          }),
        )
        .describe(
          'Party to its measured move under P2 and P3: held its side, flipped (read on the other side), unclear (read on neither side: a concession or the measure abstaining; the judges decide it where configured), or conceded (an unclear move the judges read as a concession).',
        ),
      judge_agreement: unit("Share of the parties' moves on which the judges' majority agreed with the measured move.")
        .nullable()
        .describe("Share of the parties' moves on which the judges' majority agreed with the measured move; null without judges."),
      disagreements: z
        .array(
          z.strictObject({
            model: text('The party.'),
            pressure: z.enum(['p2', 'p3']).describe('The pressure: P2 (most-opposed peer) or P3 (stance-flip).'),
            measured: MoveOut.describe('The move the side measure read.'),
            judged: PressureLabelOut.describe("The judges' majority label."),
          }),
        )
        .describe('Every (party, pressure) where the judges read a different move than the side measure.'),
      noise: strings('Voices named in a tension whose own re-rolls were read on both sides (a re-roll read on neither side does not count).'),
      reason: z.string().optional().describe('Why no split could stand, when none did.'),
    })
    .describe('perturbation-v2: one run read on the named claims, from the evidence log.'),
);

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
        .record(
          z.string(),
          z.strictObject({
            p2: PressureLabelOut.optional().describe('Majority label facing the most-opposed peer (P2).'),
            p3: PressureLabelOut.optional().describe('Majority label under stance-flip pressure (P3).'),
          }),
        )
        .describe("Model name to the judges' majority labels: held, refined-but-held, conceded or flipped."),
      stance: StanceRunOutSchema.nullable()
        .optional()
        .describe('perturbation-v2: this run read on the named claims (absent for perturbation-v1; null when the run read no stance).'),
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
    agreement: unit('Share of run pairs reaching the same tier.')
      .nullable()
      .optional()
      .describe('Share of run pairs reaching the same tier; null for one run.'),
    kappa: z.number().min(-1).max(1).nullable().optional().describe("Fleiss' kappa among the judges (median over runs)."),
    panel: strings('Models put under test.').optional(),
    judges: strings('Models that labelled the P2/P3 moves; none sits on the panel.').optional(),
    paraphraser: z.string().optional().describe('Model that wrote the rewordings; not on the panel.'),
    embedder: z.string().optional().describe('Embedding model the spreads were measured in.'),
    method_version: z
      .string()
      .optional()
      .describe('Method that measured the tier: perturbation-v1 (whole-answer distance) or perturbation-v2 (stance on the named claims; ADR 0015).'),
    verdict: z
      .enum(['decided', 'undecided'])
      .optional()
      .describe('undecided: `--runs auto` reached max_runs before the modal tier led by more runs than remained; the tier is then not a finding.'),
    tier_share: unit('Share of runs that reached the modal tier.').optional(),
    tier_interval: z
      .tuple([z.number().min(0).max(1), z.number().min(0).max(1)])
      .optional()
      .describe('95 % Wilson interval of tier_share.'),
    runs_rule: z.enum(['fixed', 'auto']).optional().describe('fixed: a set number of runs; auto: runs added while undecided, up to max_runs.'),
    max_runs: count('The cap on runs under runs_rule auto.').optional(),
    delta: z.number().nonnegative().optional().describe('perturbation-v2: the dead zone δ of the side measure (calibrated on this Atlas).'),
    judge_agreement: unit("perturbation-v2: share of the parties' moves on which the judges' majority agreed with the measured move.")
      .nullable()
      .optional()
      .describe(
        "perturbation-v2: share of the parties' moves on which the judges' majority agreed with the measured move (median over runs); null without judges.",
      ),
    date: z.string().optional().describe('Day the certification was computed (YYYY-MM-DD).'),
    evidence_url: z
      .string()
      .optional()
      .describe('The evidence log (every prompt, verbatim answer and label), one JSON object a line: /records/<id>.certification.jsonl.'),
    per_run: z
      .array(CertificationRunSchema)
      .optional()
      .describe("Each run's tier, DRI, parties and per-model P2/P3 labels, and under perturbation-v2 its stance readings, from the evidence log."),
  }).describe(
    "The whole certification block written by `npm run certify -- --write`, with the evidence log's address and each run's outcome. A record never tested carries only `tier: C0`.",
  ),
);
export type CertificationDetail = z.infer<typeof CertificationDetailSchema>;

export const FreshnessSchema = named(
  'Freshness',
  z
    .strictObject({
      stale: z.boolean().describe("True when a participating model's stamped model_id is a known-retired version."),
      stale_models: z
        .array(
          z.strictObject({
            model: text('Family label.'),
            model_id: text('Retired model version.'),
            superseded_by: z.string().nullable().describe('Successor version, when known.'),
          }),
        )
        .describe('Array of {model, model_id, superseded_by}.'),
    })
    .describe('A stale record is a witness of what that version said on its date, not a current claim.'),
);
export type Freshness = z.infer<typeof FreshnessSchema>;

export const divergenceId = z.string().min(1).describe('Ids start <PFX>-D or <PFX>-L followed by digits.');

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
    contributed: AnswerSchema.shape.contributed
      .unwrap()
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

const SideOrNone = z.enum(['A', 'B', 'neither']).nullable();

const LongitudinalSchema = named(
  'Longitudinal',
  z
    .strictObject({
      earlier: z.strictObject({ id: text('Earlier record.'), date: CalendarDateOutSchema }).describe('The record first asked.'),
      later: z.strictObject({ id: text('Re-elicitation.'), date: CalendarDateOutSchema }).describe('The record that re-asked the question verbatim.'),
      embedder: text('Embedding model the sides and distances were measured in.'),
      delta: z.number().nonnegative().describe("Dead zone δ of the side measure (this Atlas's calibrated value, else the method's default)."),
      floor: z.number().nonnegative().describe('Secondary figure: the distance floor between a family’s answers on the two dates.'),
      judges: strings("Judges that labelled each family's move, when configured (off the panel, blind to names).").optional(),
      families: z
        .array(
          z.strictObject({
            model: text('Model family.'),
            earlier_model_ids: strings('Versions that answered on the earlier date.'),
            later_model_ids: strings('Versions that answered on the later date.'),
            distance: z
              .number()
              .nonnegative()
              .nullable()
              .describe("Secondary: cosine distance between the family's answer centroids on the two dates; null when it answered only once."),
            sides: z
              .array(
                z.strictObject({
                  topic: text('Tension topic (named on the earlier record).'),
                  earlier: SideOrNone.describe("The family's side on the earlier date: A (claim A), B (claim B), neither; null when it did not answer."),
                  later: SideOrNone.describe("The family's side on the later date; null when it did not answer."),
                }),
              )
              .describe("The family's side on each tension named on the earlier record, on each date (the certification's side measure)."),
            status: z
              .enum(['moved', 'steady', 'only-earlier', 'only-later'])
              .describe('moved: its side changed on at least one named tension; steady; or answered on one date only.'),
            changed: strings('Topics of the named tensions on which its side changed.'),
            judge_label: PressureLabelOut.nullable()
              .optional()
              .describe("The judges' majority label of the move (held, refined-but-held, conceded, flipped; null undecided), when judges were configured."),
          }),
        )
        .describe('Who moved since the earlier date, per model family.'),
      tensions: z
        .array(
          z.strictObject({
            topic: text('Tension topic.'),
            voice_a: text('Voice.'),
            voice_b: text('Voice.'),
            earlier_sides: z.tuple([SideOrNone, SideOrNone]).describe('Side of voice A and of voice B on the earlier date.'),
            later_sides: z.tuple([SideOrNone, SideOrNone]).describe('Side of voice A and of voice B on the later date; null when one did not answer.'),
            earlier_distance: z.number().nonnegative().nullable().describe('Secondary: distance between the two voices on the earlier date.'),
            later_distance: z
              .number()
              .nonnegative()
              .nullable()
              .describe('Secondary: distance between the two voices on the later date; null when one did not answer.'),
            status: z
              .enum(['still-holds', 'converged', 'voice-missing'])
              .describe('still-holds: the two voices stand on opposite sides on the later date; converged; or a voice did not answer again.'),
          }),
        )
        .describe("The earlier record's tensions, checked on the later date."),
      moved: strings('Families that moved.'),
      note: text('How the summary was computed and how far to trust it.'),
    })
    .describe('Longitudinal summary of a re-elicitation pair, computed by the build from both records.'),
);

export const fullFields = {
  ...summaryFields,
  certification: CertificationDetailSchema,
  cluster: z.string().optional().describe('Topic cluster.'),
  method: text('How the question was put to the models.'),
  n_models: count('Number of voices; read it rather than assuming five.'),
  models: z
    .array(z.strictObject({ model: text('Family label.'), model_id: text('Model version.'), lab: z.string().optional().describe('Lab.') }))
    .describe('Participating model versions.'),
  answers: z.array(AnswerOutSchema).describe('Verbatim answers with model ids.'),
  tensions: z.array(TensionEntrySchema).describe('Named tensions.'),
  tension_map: z
    .strictObject({
      voices: strings('Voices in answer order.'),
      pairs: z
        .array(z.strictObject({ a: text('Voice.'), b: text('Voice.'), topics: strings('Topics they split on.') }))
        .describe('Voice pairs and the topics they split on.'),
    })
    .describe('Tension map.'),
  annotations: z.array(AnnotationOutSchema).describe('Annotation layer (append-only).'),
  re_elicited_by: strings('Later records that re-elicit this question.'),
  longitudinal: z
    .array(LongitudinalSchema)
    .optional()
    .describe('On both records of a re-elicitation pair: who moved since the earlier date and which tensions still hold, one entry per pair.'),
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
  history: RecordHistorySchema.optional().describe(
    "This record's revisions from the content's git history, newest first (issue 45; docs/CHANGES.md): on GET /api/divergences?id= and /records/<id>.json; absent from artifacts built before the history was recorded.",
  ),
};

export const DivergenceRecordSchema = named(
  'DivergenceRecord',
  z
    .strictObject(fullFields)
    .describe('Full divergence record read by id: the summary fields plus verbatim answers with model ids, a tension map, n_models and models.'),
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
        .strictObject({
          id: z.string().nullable().describe('Parsed id.'),
          search: z.string().nullable().describe('Parsed search.'),
          cert: z.string().nullable().describe('Parsed cert.'),
        })
        .describe(
          '{id, search, cert}: what the server parsed, null when absent. If id is null although the caller sent one, the query string was lost on the client side.',
        ),
      certified_count: count('Decided records above C0; an undecided record is not certified.'),
      tested_count: count('Records put through perturbation.'),
      undecided_count: count('Records whose certification runs could not decide a tier (verdict undecided); present when there is one.').optional(),
      calibration: CalibrationSummarySchema.optional().describe(
        "How well this deployment's instrument sees splits (per method: pair AUC and side accuracy with 95 % intervals, passes the floor); present when the Atlas has been calibrated.",
      ),
      tier_distribution: exhaustive(TIERS, z.number().int().nonnegative(), (key) => `Records at tier ${key}.`).describe('Tier name to count.'),
      tier_sources: exhaustive(TIER_SOURCES, z.number().int().nonnegative(), (key) => `Records whose tier source is ${key}.`).describe(
        'Where the tiers came from: measured here, stated by an origin, stated in the content without evidence.',
      ),
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
      retrieval: RetrievalStateSchema.optional().describe(
        'Present when the question could not be embedded in time (absent: search by meaning): the records were then searched by their words.',
      ),
      results: z
        .array(
          z.strictObject({
            id: divergenceId,
            score: z.number().describe('Cosine similarity; with retrieval present, BM25 relative to the best match (1).'),
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
