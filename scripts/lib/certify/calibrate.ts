/**
 * `npm run certify -- --calibrate`: measures, on this deployment's own Atlas, how well each split
 * measure recovers the splits the records name (core/certify/calibration.ts), and writes the
 * figures to `content/certification-calibration.json` (ADR 0015).
 *
 * The Atlas's answers are embedded as v1 embeds them: each voice's name in an answer is replaced
 * by "A model" first (a model naming itself is style, not stance). With judges, each judge reads
 * which claim each voice's answer supports; every such call is reserved, logged in the record's
 * evidence log and read back on a re-run, like any certification call.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { calibrate, calibrateMargin, scoreJudges, scoreV1, scoreV2, type CalibrationInput, type MethodCalibration } from '../../../core/certify/calibration.ts';
import { callCeilingUsd, estimateTokens } from '../../../core/certify/plan.ts';
import { anonymise, parseStanceReply, stanceJudgePrompt } from '../../../core/certify/prompts.ts';
import { DEFAULT_FLOOR, MARGIN_PRECISION_TARGET, type CalibrationFloor } from '../../../core/certify/protocol.ts';
import { answerSentences, type EmbeddedAnswer, type Side } from '../../../core/certify/stance.ts';
import { fnv1a, seededRandom } from '../../../core/random.ts';
import { CALIBRATION_FILE, CalibrationFileSchema, type CalibrationFile } from '../../../schemas/certification.ts';
import type { Embedder } from '../../../providers/embedder.ts';
import { loadContent } from '../../../content-files/load-content.ts';
import type { createRunner, CertifyModel } from './runner.ts';

/** The method version the judges' stance calls are logged under (and read back by). */
export const CALIBRATION_CALLS_VERSION = 'calibration';

export const CALIBRATION_METHODS = ['perturbation-v1', 'perturbation-v2', 'judges'] as const;
export type CalibrationMethod = (typeof CALIBRATION_METHODS)[number];

export interface CalibrateOptions {
  contentDir: string;
  embedder: Embedder;
  methods: readonly CalibrationMethod[];
  floor?: CalibrationFloor;
  resamples?: number;
  seed?: number;
  /** Write the figures into the content folder (otherwise only returned). */
  write?: boolean;
  /** Embeds many texts, e.g. through the build's embedding cache; defaults to the embedder itself. */
  embedAll?: (texts: readonly string[]) => Promise<Float32Array[]>;
  /** Judges, with a runner that reserves, logs and reuses their calls (`judges` method). */
  judges?: { models: readonly CertifyModel[]; runner: Pick<ReturnType<typeof createRunner>, 'call'> };
  now?: () => Date;
}

/** Passes when the low ends of both intervals reach the floor. */
export function passesFloor(method: Pick<MethodCalibration, 'pair_auc' | 'side_accuracy'>, floor: CalibrationFloor): boolean {
  const low = (figure: MethodCalibration['pair_auc']) => figure.interval?.[0] ?? -Infinity;
  return low(method.pair_auc) >= floor.pair_auc && low(method.side_accuracy) >= floor.side_accuracy;
}

interface AtlasRecord {
  id: string;
  question: string;
  /** Voice → verbatim answer (the first answer of each voice). */
  answers: Map<string, string>;
  tensions: { voiceA: string; voiceB: string; claimA: string; claimB: string }[];
}

function atlasRecords(contentDir: string): AtlasRecord[] {
  const content = loadContent(contentDir);
  return content.divergences
    .map((entry) => {
      const answers = new Map<string, string>();
      for (const answer of entry.data.answers) if (!answers.has(answer.model)) answers.set(answer.model, answer.text);
      return {
        id: entry.data.id,
        question: entry.data.question,
        answers,
        tensions: entry.data.tensions.map((t) => ({ voiceA: t.voice_a, voiceB: t.voice_b, claimA: t.claim_a, claimB: t.claim_b })),
      };
    })
    .filter((record) => record.answers.size >= 2 && record.tensions.some((t) => record.answers.has(t.voiceA) && record.answers.has(t.voiceB)));
}

async function embedRecords(records: readonly AtlasRecord[], embedAll: (texts: readonly string[]) => Promise<Float32Array[]>): Promise<CalibrationInput[]> {
  const texts = new Set<string>();
  const neutral = (record: AtlasRecord, text: string) =>
    anonymise(
      text,
      [...record.answers.keys()].map((voice): [string, string] => [voice, 'A model']),
    );
  for (const record of records) {
    for (const text of record.answers.values()) {
      const plain = neutral(record, text);
      texts.add(plain);
      for (const sentence of answerSentences(plain)) texts.add(sentence);
    }
    for (const tension of record.tensions) {
      texts.add(neutral(record, tension.claimA));
      texts.add(neutral(record, tension.claimB));
    }
  }
  const list = [...texts];
  const vectors = await embedAll(list);
  const vectorOf = new Map(list.map((text, i) => [text, vectors[i]!]));
  return records.map((record) => ({
    id: record.id,
    answers: new Map(
      [...record.answers].map(([voice, text]): [string, EmbeddedAnswer] => {
        const plain = neutral(record, text);
        return [voice, { whole: vectorOf.get(plain)!, sentences: answerSentences(plain).map((sentence) => vectorOf.get(sentence)!) }];
      }),
    ),
    tensions: record.tensions.map((t) => ({
      voiceA: t.voiceA,
      voiceB: t.voiceB,
      claimA: vectorOf.get(neutral(record, t.claimA))!,
      claimB: vectorOf.get(neutral(record, t.claimB))!,
    })),
  }));
}

/** The prompt a judge sees for one (tension, voice), blind and with the claims in a drawn order. */
function stanceView(record: AtlasRecord, index: number, voice: string, judge: string, seed: number) {
  const tension = record.tensions[index]!;
  const voices = [...record.answers.keys()].sort();
  const key = `${record.id}/calibrate/stance/${index}/${voice}/${judge}`;
  // Claim order drawn per call from the seed and the key: reproducible, and no position habit.
  const flipped = seededRandom(fnv1a(`${seed}\u0000${key}`))() < 0.5;
  const replacements = voices.map((name, i): [string, string] => [name, `Voice ${String.fromCharCode(65 + i)}`]);
  const hide = (text: string) => anonymise(text, replacements);
  const claims: [string, string] = flipped ? [hide(tension.claimB), hide(tension.claimA)] : [hide(tension.claimA), hide(tension.claimB)];
  return { key, flipped, messages: stanceJudgePrompt({ question: hide(record.question), answer: hide(record.answers.get(voice)!), claims }) };
}

/** `--calibrate --plan` with judges: how many stance calls, and the most they can cost. Sends nothing. */
export function planJudgeCalls(contentDir: string, judges: readonly CertifyModel[], seed = 1): { calls: number; estimatedCostUsd: number } {
  let calls = 0;
  let estimatedCostUsd = 0;
  for (const record of atlasRecords(contentDir)) {
    for (const [index] of record.tensions.entries()) {
      for (const voice of record.answers.keys()) {
        for (const judge of judges) {
          const { messages } = stanceView(record, index, voice, judge.name, seed);
          calls++;
          estimatedCostUsd += callCeilingUsd(estimateTokens(messages.map((message) => message.content).join('\n')), judge.maxTokens, judge.price);
        }
      }
    }
  }
  return { calls, estimatedCostUsd };
}

/** Each judge's reading of each (tension, voice); the majority decides, a tie is `neither`. */
async function judgeSides(record: AtlasRecord, judges: NonNullable<CalibrateOptions['judges']>, seed: number): Promise<Map<string, Side | 'both'>[]> {
  const voices = [...record.answers.keys()].sort();
  const sides = await Promise.all(
    record.tensions.map(async (_, index) => {
      const byVoice = new Map<string, Side | 'both'>();
      await Promise.all(
        voices.map(async (voice) => {
          const votes = await Promise.all(
            judges.models.map(async (judge) => {
              const { key, flipped, messages } = stanceView(record, index, voice, judge.name, seed);
              const line = await judges.runner.call(record.id, 0, 'stance', key, judge, messages);
              const reply = parseStanceReply(line.answer);
              if (reply === undefined) return undefined;
              if (reply === 'both' || reply === 'neither') return reply;
              return (reply === 'first') !== flipped ? 'A' : 'B';
            }),
          );
          const counts = new Map<string, number>();
          for (const vote of votes) if (vote !== undefined) counts.set(vote, (counts.get(vote) ?? 0) + 1);
          const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1]);
          const top = ranked[0];
          byVoice.set(voice, top === undefined || (ranked[1] !== undefined && ranked[1][1] === top[1]) ? 'neither' : (top[0] as Side | 'both'));
        }),
      );
      return byVoice;
    }),
  );
  return sides;
}

export async function calibrateContent(options: CalibrateOptions): Promise<CalibrationFile> {
  const floor = options.floor ?? DEFAULT_FLOOR;
  const resamples = options.resamples ?? 1000;
  const seed = options.seed ?? 1;
  const records = atlasRecords(options.contentDir);
  const embedAll = options.embedAll ?? ((texts: readonly string[]) => options.embedder.embed(texts));
  const inputs = await embedRecords(records, embedAll);
  const methods: CalibrationFile['methods'] = {};
  const figures = (scored: Parameters<typeof calibrate>[0]) => {
    // The same resampled records for every method, so their intervals compare like with like.
    const calibration = calibrate(scored, { resamples, random: seededRandom(seed) });
    return { ...calibration, passes: passesFloor(calibration, floor) };
  };
  if (options.methods.includes('perturbation-v1')) methods['perturbation-v1'] = figures(inputs.map(scoreV1));
  if (options.methods.includes('perturbation-v2'))
    methods['perturbation-v2'] = { ...figures(inputs.map(scoreV2)), margin: calibrateMargin(inputs, MARGIN_PRECISION_TARGET) };
  if (options.methods.includes('judges')) {
    if (!options.judges || options.judges.models.length === 0) throw new Error('--method judges needs judges: configure extra models in PANEL_CONFIG');
    const scored = [];
    for (const [i, record] of records.entries()) {
      const sides = await judgeSides(record, options.judges, seed);
      scored.push(scoreJudges(inputs[i]!, sides));
    }
    methods.judges = { ...figures(scored), judges: options.judges.models.map((model) => model.name) };
  }
  const file = CalibrationFileSchema.parse({
    date: (options.now ?? (() => new Date()))().toISOString().slice(0, 10),
    embedder: options.embedder.id,
    records: records.length,
    halves: 'FNV-1a hash of the record id: even → tuning half, odd → held-out half',
    bootstrap: { resamples, seed, level: 0.95 },
    floor,
    methods,
  });
  if (options.write) writeFileSync(path.join(options.contentDir, CALIBRATION_FILE), `${JSON.stringify(file, null, 2)}\n`);
  return file;
}

/** The refusal `--write` gives a method this Atlas's calibration does not back; undefined when it may write. */
export function writeRefusal(calibration: CalibrationFile | undefined, method: string, floor: CalibrationFloor): string | undefined {
  if (!calibration) return `this Atlas has no calibration: run \`npm run certify -- --calibrate\` before --write`;
  const figures = calibration.methods[method];
  if (!figures) return `${method} is not calibrated on this Atlas: run \`npm run certify -- --calibrate --method ${method}\``;
  if (passesFloor(figures, floor)) return undefined;
  const low = (value: [number, number] | null) => (value === null ? 'n/a' : value[0].toFixed(3));
  const passing = Object.entries(calibration.methods)
    .filter(([name, other]) => name !== method && name !== 'judges' && passesFloor(other, floor))
    .map(([name]) => name);
  return (
    `${method} is below this Atlas's calibration floor (pair AUC low ${low(figures.pair_auc.interval)} < ${floor.pair_auc} or side accuracy low ${low(figures.side_accuracy.interval)} < ${floor.side_accuracy}): its tiers would not say the split is genuine.` +
    (passing.length > 0 ? ` Measured methods that pass: ${passing.join(', ')} (--method ${passing[0]}).` : ' No measured method passes.')
  );
}
