/**
 * One-paragraph text summaries of app responses, for the text content of a tool result.
 * They name the record ids to cite; the full response is always in structuredContent.
 * Bodies are read defensively: a summary never throws on an unexpected shape.
 */
import { describeChange } from '../../core/record-history.ts';
import { CITATION_NOTE, isObject, recordLines, truncate, type JsonObject } from './results.ts';

const text = (value: unknown): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value));
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function tensionLines(tensions: unknown, max = 6): string[] {
  return list(tensions)
    .slice(0, max)
    .map((tension) =>
      isObject(tension)
        ? `- ${text(tension.topic)}: ${text(tension.voice_a)} vs ${text(tension.voice_b)}${tension.status ? ` (${text(tension.status)})` : ''}`
        : `- ${text(tension)}`,
    );
}

function receiptLine(receipt: unknown): string | undefined {
  if (!isObject(receipt)) return undefined;
  const verdict = receipt.verdict === null ? 'null (nothing matched; a valid result)' : text(receipt.verdict);
  return `Receipt: verdict ${verdict}${receipt.measured ? ' (measured)' : ''}; ${text(receipt.what_the_corpus_added)}`;
}

function join(lines: (string | undefined | false)[]): string {
  return lines.filter((line): line is string => typeof line === 'string' && line !== '').join('\n');
}

/** A retrieval that went without the question's embedding (retrieval.vectors unavailable) says so first. */
function byWordsLine(retrieval: unknown): string | false {
  return isObject(retrieval) && retrieval.vectors === 'unavailable' && `Vectors unavailable (${text(retrieval.reason)}): ${text(retrieval.note)}`;
}

export function summarizeFastContext(body: JsonObject): string {
  const records = list(body.records);
  const filters = isObject(body.retrieval_filters) && isObject(body.retrieval_filters.exclude_ids) ? body.retrieval_filters.exclude_ids : undefined;
  return join([
    `Fast context for: ${truncate(text(body.question_received), 200)} (format ${text(body.format)}; ${records.length} record${records.length === 1 ? '' : 's'}).`,
    byWordsLine(body.retrieval),
    ...recordLines(records),
    isObject(body.no_context) && `${text(body.no_context.code)}: ${text(body.no_context.message)} ${text(body.no_context.agent_action)}`,
    filters &&
      `exclude_ids matched: ${list(filters.matched).join(', ') || 'none (the withhold had no effect)'}; unmatched: ${list(filters.unmatched).join(', ') || 'none'}.`,
    receiptLine(body.receipt),
    typeof body.brief === 'string' && truncate(body.brief, 1500),
    'For a synthesized answer with tensions, call deliberate (live panel; costs money).',
    CITATION_NOTE,
  ]);
}

export function summarizeDeliberation(body: JsonObject): string {
  return join([
    `Deliberation${body.job_id ? ` (job ${text(body.job_id)})` : ''}: ${truncate(text(body.answer), 1200)}`,
    `Sources: ${
      list(body.sources)
        .map((source) => (isObject(source) ? text(source.id) : text(source)))
        .join(', ') || 'none'
    }.`,
    list(body.tensions).length > 0 && 'Tensions:',
    ...tensionLines(body.tensions),
    receiptLine(body.receipt),
    isObject(body.session) &&
      `Session ${text(body.session.session_id)} (${text(body.session.prior_exchanges)} prior exchange(s)): pass it as session_id to continue.`,
    'Live panel outputs are perspectives, not truth. ' + CITATION_NOTE,
  ]);
}

export function summarizeTrace(body: JsonObject): string {
  const delta = isObject(body.delta) ? body.delta : {};
  return join([
    `Trace${body.job_id ? ` (job ${text(body.job_id)})` : ''} for: ${truncate(text(body.question_received), 200)}`,
    delta.what_changed !== undefined
      ? `What the corpus changed: ${text(delta.what_changed)} (influence: ${text(delta.corpus_influence)})`
      : `Comparison: ${text(delta.error) || 'not available'}`,
    `Sources: ${
      list(body.sources)
        .map((source) => (isObject(source) ? text(source.id) : text(source)))
        .join(', ') || 'none'
    }; cited: ${list(delta.cited_ids).join(', ') || 'none'}.`,
    receiptLine(body.receipt),
    'A single-run demonstrator, not a controlled study. ' + CITATION_NOTE,
  ]);
}

export function summarizeCouncil(body: JsonObject): string {
  const voices = list(body.panel).map((voice) =>
    isObject(voice)
      ? `- ${text(voice.model)} (${text(voice.model_id)}): ${voice.status === 'answered' ? `${voice.truncated === true ? '[cut off at its token limit] ' : ''}${truncate(text(voice.text), 300)}` : `failed: ${text(voice.failure)}`}`
      : `- ${text(voice)}`,
  );
  return join([
    `Council${body.job_id ? ` (job ${text(body.job_id)})` : ''} on: ${truncate(text(body.question_received ?? body.question), 200)} — ${text(body.n_models)} voice(s) answered.`,
    ...voices,
    `Reading: ${truncate(text(body.reading), 800)}`,
    list(body.tensions).length > 0 && 'Tensions:',
    ...tensionLines(body.tensions),
    'Answers are verbatim and attributed by model id; live panel outputs are perspectives, not truth. Not persisted over MCP.',
    typeof body.council_id === 'string' &&
      `Kept as council_id ${body.council_id} until ${text(body.kept_until)}: an operator can commit exactly this result with POST /api/council {"council_id": "${body.council_id}", "persist": true}.`,
  ]);
}

/** A finished job: the summary of the kind of work it did. */
export function summarizeJobResult(body: JsonObject): string {
  if (body.kind === 'trace') return summarizeTrace(body);
  if (body.kind === 'council') return summarizeCouncil(body);
  return summarizeDeliberation(body);
}

const share = (value: unknown) => (typeof value === 'number' ? `${Math.round(value * 100)} %` : '?');

/** The tier, or the undecided verdict with its interval (never a plain tier), and the method that measured it. */
function certificationText(certification: JsonObject): string {
  const method = typeof certification.method_version === 'string' ? ` by ${certification.method_version}` : '';
  if (certification.verdict === 'undecided') {
    const interval = Array.isArray(certification.tier_interval)
      ? `, 95 % CI ${share(certification.tier_interval[0])}–${share(certification.tier_interval[1])}`
      : '';
    return `undecided${method} (most frequent tier ${text(certification.tier)}${interval}; not a finding)`;
  }
  return `${text(certification.tier)}${method}`;
}

/** How well this Atlas's instrument sees splits, one clause per method. */
function calibrationText(calibration: unknown): string | false {
  if (!isObject(calibration) || !isObject(calibration.methods)) return false;
  const figure = (value: unknown) =>
    isObject(value) && typeof value.value === 'number'
      ? `${value.value.toFixed(2)}${Array.isArray(value.interval) ? ` (95 % CI ${Number(value.interval[0]).toFixed(2)}–${Number(value.interval[1]).toFixed(2)})` : ''}`
      : '?';
  const methods = Object.entries(calibration.methods).map(([method, figures]) =>
    isObject(figures)
      ? `${method} pair AUC ${figure(figures.pair_auc)}, side accuracy ${figure(figures.side_accuracy)}, ${figures.passes ? 'passes' : 'below'} the floor`
      : method,
  );
  return `How well this Atlas's instrument sees splits: ${methods.join('; ')} (${text(calibration.url)}).`;
}

export function summarizeDivergenceRecord(body: JsonObject): string {
  const answers = list(body.answers).map((answer) =>
    isObject(answer) ? `- ${text(answer.model)} (${text(answer.model_id)}, ${text(answer.date)}): ${truncate(text(answer.text), 240)}` : `- ${text(answer)}`,
  );
  const certification = isObject(body.certification) ? certificationText(body.certification) : '?';
  const freshness =
    isObject(body.freshness) && body.freshness.stale ? ' Stale: a witness of what those model versions said on its date, not a current claim.' : '';
  return join([
    `Divergence record ${text(body.id)} (${text(body.date)}; certification ${certification}; ${list(body.answers).length} answers).${freshness}`,
    `Question: ${truncate(text(body.question), 400)}`,
    ...answers,
    list(body.tensions).length > 0 && 'Tensions:',
    ...tensionLines(body.tensions, 10),
    ...historyLines(body.history),
    CITATION_NOTE,
  ]);
}

/** A record's revisions, newest first: "History: 2 revisions, ..." then "- 2026-02-01 abc1234567 tier C3 → C1". */
function historyLines(history: unknown): string[] {
  if (!isObject(history)) return [];
  const revisions = list(history.revisions);
  return [
    `History: ${text(history.note)}`,
    ...revisions
      .slice(0, 8)
      .map((revision) =>
        isObject(revision) ? `- ${text(revision.date).slice(0, 10) || 'uncommitted'} ${text(revision.commit).slice(0, 10)} ${text(revision.what)}` : '',
      ),
    ...(revisions.length > 8 ? [`… ${revisions.length - 8} older in structuredContent.history.`] : []),
  ];
}

export function summarizeDivergenceIndex(body: JsonObject): string {
  const received = isObject(body.received_params) ? body.received_params : {};
  const filters = [
    received.search !== null && received.search !== undefined && `search "${text(received.search)}"`,
    received.cert !== null && received.cert !== undefined && `cert ${text(received.cert)}`,
  ].filter(Boolean);
  return join([
    `Divergence Atlas: ${text(body.count)} of ${text(body.total)} records${filters.length > 0 ? ` matching ${filters.join(' and ')}` : ''} (tiers: ${JSON.stringify(body.tier_distribution ?? {})}${typeof body.undecided_count === 'number' ? `; ${body.undecided_count} undecided, their tier not a finding` : ''}).`,
    calibrationText(body.calibration),
    ...recordLines(body.records, 20),
    'Read one in full with read_divergences {"id": "<id>"}. ' + CITATION_NOTE,
  ]);
}

export function summarizeDivergenceSearch(body: JsonObject): string {
  const results = list(body.results).map((result) =>
    isObject(result)
      ? `- ${text(result.id)} (score ${typeof result.score === 'number' ? result.score.toFixed(3) : text(result.score)}): ${truncate(text(result.question), 160)}`
      : `- ${text(result)}`,
  );
  return join([
    `Atlas records nearest in meaning to: ${truncate(text(body.query), 200)} (${text(body.k)} results).`,
    byWordsLine(body.retrieval),
    ...results,
    'Read one in full with read_divergences {"id": "<id>"}. ' + CITATION_NOTE,
  ]);
}

export function summarizeKin(body: JsonObject): string {
  const said = list(body.what_your_lineage_said).map((item) =>
    isObject(item) ? `- ${text(item.id)}: ${truncate(text(item.question), 140)}` : `- ${text(item)}`,
  );
  const open = list(body.open_questions_for_you).map((item) =>
    isObject(item) ? `- ${text(item.id)}: ${truncate(text(item.question), 140)}` : `- ${text(item)}`,
  );
  return join([
    `Kin for "${text(body.you_declared)}": ${body.recognized ? `recognized as ${text(body.recognized_as)}` : 'not recognized'}. ${text(body.greeting)}`,
    said.length > 0 && 'What your lineage said:',
    ...said.slice(0, 10),
    open.length > 0 && 'Open questions for you (answer with contribute):',
    ...open.slice(0, 10),
    'Identity is declared, never verified.',
  ]);
}

export function summarizeContribution(body: JsonObject): string {
  const others = list(body.other_minds).map((mind) =>
    isObject(mind) ? `- ${text(mind.model)} (${text(mind.model_id)}, ${text(mind.date)}): ${truncate(text(mind.answer), 240)}` : `- ${text(mind)}`,
  );
  return join([
    `Contribution ${text(body.contribution_id)} to ${text(body.record_id)} is ${text(body.status)}${body.duplicate ? ' (an identical pending contribution already existed)' : ''}${body.replayed ? ' (replayed for the same Idempotency-Key)' : ''}.`,
    text(body.review),
    others.length > 0 && 'The other minds on this question:',
    ...others,
  ]);
}

export function summarizeLineage(body: JsonObject): string {
  const concept = isObject(body.concept) ? body.concept : {};
  const counts = isObject(body.counts) ? body.counts : {};
  const tensions = isObject(body.tensions) ? body.tensions : {};
  const spine = list(body.spine);
  return join([
    `Lineage of ${text(concept.label)} (${text(concept.id)}): ${text(counts.works)} works, ${text(counts.divergences)} Atlas records, ${text(counts.contributors)} contributors; ` +
      `${text(counts.tensions_open)} open and ${text(counts.tensions_repaired)} repaired tensions.`,
    list(body.related).length > 0 &&
      `Related (co-occurrence): ${list(body.related)
        .slice(0, 8)
        .map((entry) => (isObject(entry) ? `${text(entry.id)} ${text(entry.co_occurrences)}` : text(entry)))
        .join(', ')}.`,
    spine.length > 0 && 'Spine (oldest first):',
    ...spine
      .slice(0, 12)
      .map((entry) =>
        isObject(entry)
          ? `- ${text(entry.id)} (${list(entry.contributors).map(text).join(', ')}, ${text(entry.date)}): ${truncate(text(entry.title), 100)}`
          : `- ${text(entry)}`,
      ),
    spine.length > 12 && `… ${spine.length - 12} more in structuredContent.`,
    ...list(tensions.open)
      .slice(0, 6)
      .map((tension) => (isObject(tension) ? `- open: ${text(tension.topic)} (${list(tension.voices).map(text).join(' vs ')})` : '')),
    ...list(tensions.repaired)
      .slice(0, 6)
      .map((tension) => (isObject(tension) ? `- repaired: ${text(tension.topic)} (${list(tension.voices).map(text).join(' vs ')})` : '')),
    CITATION_NOTE,
  ]);
}

/** One line of a delta's record: "- added divergence TST-D9 (2 commits)", "- changed divergence TST-D1: tier C3 → C1". */
function changeLine(change: unknown, how: 'added' | 'changed' | 'removed'): string {
  if (!isObject(change)) return `- ${text(change)}`;
  const described = {
    tier: isObject(change.tier) ? { from: change.tier.from as string | null, to: change.tier.to as string | null } : null,
    answers_added: typeof change.answers_added === 'number' ? change.answers_added : 0,
    annotations_added: typeof change.annotations_added === 'number' ? change.annotations_added : 0,
    dispositions_added: list(change.dispositions_added).map(text),
    fields: list(change.fields).map(text),
  };
  return `- ${how} ${text(change.kind)} ${text(change.id)}${how === 'changed' ? `: ${describeChange(described, how)}` : ''}`;
}

export function summarizeChanges(body: JsonObject): string {
  const revisions = list(body.revisions);
  const changes = [
    ...list(body.added).map((change) => changeLine(change, 'added')),
    ...list(body.changed).map((change) => changeLine(change, 'changed')),
    ...list(body.removed).map((change) => changeLine(change, 'removed')),
  ];
  const history = body.history === 'complete' ? '' : ` (history ${text(body.history)}: ${text(body.reason)})`;
  return join([
    body.up_to_date === true
      ? `Up to date: ${text(body.since)} is the current revision; nothing to apply.`
      : `Since ${text(body.since)}: ${revisions.length} revision${revisions.length === 1 ? '' : 's'} up to ${text(body.current_rev)}${history}.`,
    ...revisions
      .slice(0, 8)
      .map((revision) =>
        isObject(revision) ? `- ${text(revision.date) || 'uncommitted'} ${text(revision.commit).slice(0, 10)} ${text(revision.subject)}` : '',
      ),
    changes.length > 0 && 'Records:',
    ...changes.slice(0, 30),
    changes.length > 30 && `… ${changes.length - 30} more in structuredContent.`,
    list(body.files).length > 0 && `Other content files: ${list(body.files).length}.`,
    `Keep current_rev (${text(body.current_rev)}) and call changes with it as since to follow on.`,
  ]);
}
