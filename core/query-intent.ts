/**
 * What kind of question the fast path was asked, read from its words alone (no model call),
 * so that ranking can serve it (spec §1: the Atlas holds cross-model disagreement; §4.2).
 *
 * - contested: the question asks where voices split (disagreement words such as "disagree",
 *   "tension", "unresolved"; two named voices; "how do different contributors think…"; a
 *   difference between named voices), or puts an open either/or or evaluative question
 *   ("…, or is it…?", "is it achievable?", "should…"). Atlas records are the direct evidence.
 * - factual: a lookup ("What is X?", "Who is X?", "What does X mean?", "How does X work?",
 *   "How are X generated?") with none of the above. The works hold the answer; an Atlas
 *   record is an open question answered by several models and is at most background.
 * - open: anything else. Ranking is left as retrieval made it.
 *
 * The reading is deliberately conservative: a question is factual only in those lookup
 * forms, and a comparison of two concepts ("the difference between A and B") is open, not
 * factual, because the corpus may hold a critique of one by the other.
 */

export type QuestionKind = 'contested' | 'factual' | 'open';

/** A model family the Atlas knows, with every label that names it (matched ignoring case). */
export interface VoiceLexiconEntry {
  family: string;
  names: readonly string[];
}

export interface QuestionIntent {
  kind: QuestionKind;
  /** Families the question names, in the order they first appear. */
  voices: string[];
  /**
   * The question without the named voices and the words that only say "where do they
   * disagree": what the disagreement is about. Equal to the question when nothing was removed.
   */
  topic: string;
  /** The words that decided the kind, for logs and tests; null for open. */
  cue: string | null;
}

/** Always mark a question about disagreement. */
const DISAGREEMENT =
  /\b(disagree(?:s|d|ment|ments)?|diverge(?:s|d)?|divergen(?:ce|ces|t)|tensions?|contested|disputes?|disputed|debates?|debated|controvers(?:y|ies|ial)|unresolved|at odds|conflicting)\b/i;
/** Mark it only when a voice is named ("How does A's view differ…?"). */
const COMPARISON = /\b(differ(?:s|ed|ence|ences|ent)?|agree(?:s|d|ment)?|versus|vs\.?|split(?:s)?\s+on|compare(?:s|d)?|contrast(?:s)?)\b/i;
/** A comparison of two things: never a plain lookup, even in the form "What is the difference…". */
const COMPARISON_OF_TWO = /\b(differ(?:s|ed|ence|ences)?|versus|vs\.?|compare(?:s|d)?|contrast(?:s)?)\b/i;
/** "different contributors", "each model", "which voices"…: the question wants the spread of views. */
const VOICES_AS_GROUP =
  /\b(different|various|several|each|which|both|other|multiple)\s+(contributors?|models?|voices?|minds|labs|panel(?:ists)?|perspectives|viewpoints|views)\b/i;
/** Either/or and evaluative questions with no settled answer (the kind the Atlas asks). */
const OPEN_ALTERNATIVE =
  /^(is|are|was|does|do|did|can|could|should|would|will|has|have)\b[^?]*,?\s+or\s+(is|are|does|do|did|can|could|should|would|will|has|have|only|merely|just|simply)\b/i;
const EVALUATIVE =
  /^should\b|\bought to\b|\b(?:is|are) (?:it|this|that|they) (?:really |even |ever )?(?:achievable|possible|feasible|real|genuine|right|wrong|good|bad|desirable|inevitable)\b/i;

/** Lookup forms: the first clause asks what something is, means, or how it works. */
const LOOKUP = [
  /^(what|who|which)\s+(is|are|was|were)\s+/i,
  /^what\s+(does|do)\s+.+\s+mean\b/i,
  /^how\s+(does|do)\s+.+\s+work\b/i,
  /^how\s+(is|are|was|were)\s+.+?\s+\w+(ed|en)\b/i,
  /^(define|describe|explain)\b/i,
];

/** Words that go with the disagreement scaffolding and say nothing about the topic. */
const SCAFFOLDING = [
  VOICES_AS_GROUP,
  DISAGREEMENT,
  COMPARISON,
  /\b(where|how)\s+(do|does|did)\b/i,
  /\b(think|say|says|said|see|frame|view)s?\s+about\b/i,
  /\bin the corpus\b/i,
];

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A whole-token match of a voice label, with an optional possessive ("Kestrel's"). */
function voicePattern(name: string): RegExp {
  return new RegExp(`(?<![\\p{L}\\p{N}_-])${escapeRegExp(name)}(?:['’]s)?(?![\\p{L}\\p{N}_-])`, 'giu');
}

export function findVoices(text: string, lexicon: readonly VoiceLexiconEntry[]): string[] {
  const found: { family: string; at: number }[] = [];
  for (const entry of lexicon) {
    let first = Infinity;
    for (const name of entry.names) {
      if (name.trim() === '') continue;
      const match = voicePattern(name).exec(text);
      if (match) first = Math.min(first, match.index);
    }
    if (first !== Infinity) found.push({ family: entry.family, at: first });
  }
  return found.sort((a, b) => a.at - b.at).map((item) => item.family);
}

function removeAll(text: string, pattern: RegExp): string {
  const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
  return text.replace(global, ' ');
}

/** The question with voice names and disagreement scaffolding taken out. */
export function topicOf(text: string, lexicon: readonly VoiceLexiconEntry[]): string {
  let topic = text;
  const names = lexicon.flatMap((entry) => entry.names).filter((name) => name.trim() !== '');
  // Longest first, so "kestrel-2-mini" goes before "kestrel-2".
  for (const name of [...names].sort((a, b) => b.length - a.length)) topic = topic.replace(voicePattern(name), ' ');
  for (const pattern of SCAFFOLDING) topic = removeAll(topic, pattern);
  topic = topic
    .replace(/\s+([?,.;:!])/g, '$1')
    .replace(/\b(and|or)\s+(?=[?,.;:!]|$)/gi, ' ')
    .replace(/^\s*(and|or)\b/i, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  // Nothing left that could name a topic: keep the question as it was.
  const words = topic.match(/[\p{L}\p{N}]{3,}/gu) ?? [];
  return words.length === 0 ? text.trim() : topic;
}

export function readQuestion(question: string, lexicon: readonly VoiceLexiconEntry[]): QuestionIntent {
  const text = question.trim();
  const voices = findVoices(text, lexicon);
  const contested = (cue: string): QuestionIntent => ({ kind: 'contested', voices, topic: topicOf(text, lexicon), cue });

  const disagreement = DISAGREEMENT.exec(text);
  if (disagreement) return contested(disagreement[0]);
  if (voices.length >= 2) return contested(voices.join(' + '));
  const group = VOICES_AS_GROUP.exec(text);
  if (group) return contested(group[0]);
  const comparison = COMPARISON.exec(text);
  if (comparison && voices.length >= 1) return contested(comparison[0]);
  const alternative = OPEN_ALTERNATIVE.exec(text);
  if (alternative) return contested('either/or');
  const evaluative = EVALUATIVE.exec(text);
  if (evaluative) return contested(evaluative[0]);

  if (!COMPARISON_OF_TWO.test(text)) {
    for (const form of LOOKUP) {
      const match = form.exec(text);
      if (match) return { kind: 'factual', voices, topic: text, cue: match[0].trim() };
    }
  }
  return { kind: 'open', voices, topic: text, cue: null };
}
