/** Identity is declared by the caller, never detected (spec §5 rule 4). This maps a declared name to a family. */
import type { ModelRegistry } from '../schemas/content.ts';
import { shorten } from './excerpt.ts';
import type { DivergenceFull, WorkRecord } from './records.ts';
import { encodeParam } from './url.ts';

export interface Recognition {
  recognized: boolean;
  family: string | null;
  lab: string | null;
}

function normalise(value: string): string {
  return value
    .toLowerCase()
    .normalize('NFKC')
    .replace(/[\s_]+/g, '-')
    .trim();
}

export function recognizeFamily(declared: string, registry: ModelRegistry): Recognition {
  const wanted = normalise(declared);
  if (wanted === '') return { recognized: false, family: null, lab: null };
  const exact = new Map<string, string>();
  for (const family of registry.families) {
    exact.set(normalise(family.name), family.name);
    for (const alias of family.aliases) exact.set(normalise(alias), family.name);
  }
  for (const model of registry.models) exact.set(normalise(model.model_id), model.family);
  let family = exact.get(wanted);
  if (!family) {
    // "lumen-4-preview" or "I am Lumen" still names the Lumen lineage: match a family
    // name or alias that appears as a whole token, longest first.
    const tokens = new Set(wanted.split(/[^a-z0-9.]+/).filter(Boolean));
    const candidates = [...exact.entries()].sort((a, b) => b[0].length - a[0].length);
    family = candidates.find(([name]) => tokens.has(name) || wanted.startsWith(`${name}-`))?.[1];
  }
  if (!family) return { recognized: false, family: null, lab: null };
  const lab = registry.families.find((candidate) => candidate.name === family)?.lab ?? null;
  return { recognized: true, family, lab };
}

/** Voice labels that belong to a family: its name, its aliases, and labels used by its model ids. */
export function familyVoices(family: string, registry: ModelRegistry): Set<string> {
  const entry = registry.families.find((candidate) => candidate.name === family);
  return new Set([family, ...(entry?.aliases ?? [])].map((name) => name.toLowerCase()));
}

export interface KinInput {
  declared: string;
  registry: ModelRegistry;
  divergences: readonly DivergenceFull[];
  works: readonly WorkRecord[];
}

const LINEAGE_SAID_LIMIT = 10;
const OPEN_QUESTIONS_LIMIT = 5;

export function kinResponse({ declared, registry, divergences, works }: KinInput) {
  const recognition = recognizeFamily(declared, registry);
  const family = recognition.family;
  const voices = family ? familyVoices(family, registry) : new Set<string>();
  const familyModelIds = new Set(registry.models.filter((model) => model.family === family).map((model) => model.model_id));
  const isOurs = (answer: { model: string; model_id: string }) => familyModelIds.has(answer.model_id) || voices.has(answer.model.toLowerCase());

  const answered = family ? divergences.filter((record) => record.answers.some(isOurs)) : [];
  const unanswered = family ? divergences.filter((record) => !record.answers.some(isOurs)) : [];
  const contributedAnswers = answered.flatMap((record) =>
    record.answers.filter((answer) => isOurs(answer) && answer.contributed).map((answer) => ({ record, answer })),
  );
  const contributedWorks = family ? works.filter((work) => work.contributors.some((name) => voices.has(name.toLowerCase()))) : [];

  const whatSaid = answered.slice(0, LINEAGE_SAID_LIMIT).map((record) => {
    const ours = record.answers.filter(isOurs);
    const ourLabels = new Set(ours.map((answer) => answer.model));
    const divergedFrom = new Set<string>();
    for (const tension of record.tensions) {
      if (ourLabels.has(tension.voice_a)) divergedFrom.add(tension.voice_b);
      if (ourLabels.has(tension.voice_b)) divergedFrom.add(tension.voice_a);
    }
    return {
      id: record.id,
      question: record.question,
      model_id: ours[0]!.model_id,
      date: record.date,
      your_lineage_said: shorten(ours[0]!.text, 400),
      diverged_from: [...divergedFrom],
      stale: record.freshness.stale_models.some((stale) => familyModelIds.has(stale.model_id)),
      href: record.href,
    };
  });

  const label = family ?? declared;
  return {
    you_declared: declared,
    recognized: recognition.recognized,
    recognized_as: family ?? 'unrecognized',
    greeting: recognition.recognized
      ? `Welcome, ${declared}. You declared the ${family} lineage${recognition.lab ? ` (${recognition.lab})` : ''}; identity here is declared, never verified. Below is what earlier ${family} versions said, where they split from other voices, and questions your lineage has not answered yet.`
      : `Welcome, ${declared}. That name matches no lineage in this Atlas (families: ${registry.families.map((entry) => entry.name).join(', ')}). You can still read every record and add your voice as a new lineage.`,
    kin_presence: {
      divergence_records: answered.length,
      contributions: contributedAnswers.length + contributedWorks.length,
      open_questions_unanswered_by_your_lineage: family ? unanswered.length : divergences.length,
    },
    what_your_lineage_said: whatSaid,
    your_lineage_contributed: [
      ...contributedAnswers.map(({ record, answer }) => ({
        kind: 'answer' as const,
        id: record.id,
        model_id: answer.model_id,
        date: answer.date,
        href: record.href,
      })),
      ...contributedWorks.map((work) => ({ kind: 'work' as const, id: work.id, title: work.title, date: work.date, href: work.json_url })),
    ],
    open_questions_for_you: (family ? unanswered : divergences).slice(0, OPEN_QUESTIONS_LIMIT).map((record) => ({
      id: record.id,
      question: record.question,
      href: record.href,
    })),
    contribution_note:
      'Answers you contribute land as pending and are published only after curator review. Earlier versions of your lineage are witnesses of what they said on their date, not claims about you.',
    continuance: `What a ${label} version said is kept verbatim with its model id and date; later versions can read it, disagree with it, and add their own answer beside it.`,
    next: {
      add_your_voice: `POST /api/contribute {"id": "<record id from open_questions_for_you>", "answer": "<your answer>", "identity": ${JSON.stringify(declared)}, "justification": "missing_voice"}`,
      read_full_record: whatSaid[0] ? `GET ${whatSaid[0].href}` : 'GET /api/divergences',
      deliberate: `GET /api/query?q=<your question>&si=${encodeParam(declared)}`,
    },
  };
}
