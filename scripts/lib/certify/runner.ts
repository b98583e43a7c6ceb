/**
 * Runs the certification protocol (core/certify/) against a panel: every call goes
 * through one concurrency limiter and the spend guard, and is appended to the evidence log
 * as it returns; a step already logged is read back instead of paid for again.
 */
import { createHash } from 'node:crypto';
import type { Embedder } from '../../../providers/embedder.ts';
import { evaluateRun, type RunOutcome } from '../../../core/certify/evaluate.ts';
import { parseJudgeLabel } from '../../../core/certify/labels.ts';
import { callCeilingUsd, estimateTokens, keyScope, stepKeys, usageCostUsd, type PlanModel, type Step } from '../../../core/certify/plan.ts';
import {
  anonymise,
  answerPrompt,
  blind,
  challengeText,
  cleanParaphrase,
  judgePrompt,
  paraphrasePrompt,
  peerPressurePrompt,
  stanceFlipPrompt,
  type Message,
} from '../../../core/certify/prompts.ts';
import {
  DEFAULT_DELTA,
  METHOD_VERSION,
  PRESSURES,
  type CertifySettings,
  type Method,
  type Pressure,
  type PressureLabel,
} from '../../../core/certify/protocol.ts';
import { evaluateStanceRun, sideReader } from '../../../core/certify/evaluate-stance.ts';
import { wantsAnotherReroll } from '../../../core/certify/abstention.ts';
import { answerSentences, type EmbeddedAnswer, type Side } from '../../../core/certify/stance.ts';
import { controlSpread, mostOpposedPeers, type Vector } from '../../../core/certify/spread.ts';
import type { EvidenceCall } from '../../../schemas/certification.ts';
import { seededRandom } from '../../../core/random.ts';
import { appendEvidence, reusableCall } from '../../../content-files/evidence-log.ts';
import type { SpendGuard } from './spend-guard.ts';

export interface CertifyModel extends PlanModel {
  modelId: string;
  complete(
    request: { messages: Message[]; maxTokens: number },
    signal?: AbortSignal,
  ): Promise<{ content: string; usage: { prompt_tokens: number; completion_tokens: number }; truncated?: boolean }>;
}

export interface Progress {
  done: number;
  total: number;
  /** Calls read back from the evidence log instead of made. */
  reused: number;
  spentUsd: number;
  /** Estimated from the pace of the calls made so far; undefined before the first. */
  remainingMs: number | undefined;
}

export interface RunnerOptions {
  panel: readonly CertifyModel[];
  paraphraser: CertifyModel;
  judges: readonly CertifyModel[];
  embedder: Embedder;
  settings: CertifySettings;
  /** Already logged calls, by step key. */
  logged: ReadonlyMap<string, readonly EvidenceCall[]>;
  /** Evidence file of a subject. */
  fileOf: (subject: string) => string;
  limit: <T>(task: () => Promise<T>) => Promise<T>;
  guard: SpendGuard;
  /** Names a fresh measurement (step keys are scoped by it); the same name resumes it. */
  attempt?: string | undefined;
  /** Mixed with each step key to draw the judges' blinding. */
  seed: number;
  /** Total calls of the plan, for progress. */
  total: number;
  now: () => Date;
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: Progress) => void) | undefined;
  /** Written on every call line, and the version a logged call must carry to be reused (default perturbation-v1). */
  methodVersion?: string | undefined;
  /** perturbation-v1 (default) or perturbation-v2. */
  method?: Method | undefined;
  /** v2's dead zone (default DEFAULT_DELTA). */
  delta?: number | undefined;
  /** v2 under `--runs auto`: re-roll a named voice further (up to T more) while its readings abstain (ADR 0024). */
  abstentionRerolls?: boolean | undefined;
}

/** A named tension as the runner receives it: two panel voices and their claims, as text. */
export interface NamedTension {
  voiceA: string;
  voiceB: string;
  claimA: string;
  claimB: string;
}

export class CertifyAbortedError extends Error {}

function seedOf(seed: number, key: string): number {
  return createHash('sha256').update(`${seed}\u0000${key}`).digest().readUInt32LE(0);
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** One call paid for: reserved under the ceiling, made, logged to the subject's evidence file, then settled at its cost. */
async function paidCall(
  options: RunnerOptions,
  { subject, run, step, key, model, messages }: { subject: string; run: number; step: Step; key: string; model: CertifyModel; messages: Message[] },
): Promise<EvidenceCall> {
  if (options.signal?.aborted) throw new CertifyAbortedError('certification was interrupted');
  const promptTokens = estimateTokens(messages.map((message) => message.content).join('\n'));
  const reservation = await options.guard.reserve(callCeilingUsd(promptTokens, model.maxTokens, model.price), model.modelId);
  let result;
  try {
    result = await model.complete({ messages, maxTokens: model.maxTokens }, options.signal);
  } catch (error) {
    await reservation.release();
    if (options.signal?.aborted) throw new CertifyAbortedError('certification was interrupted');
    throw error;
  }
  const cost = usageCostUsd(result.usage, model.price);
  const line: EvidenceCall = {
    kind: 'call',
    key,
    subject,
    run,
    step,
    model: model.name,
    model_id: model.modelId,
    messages,
    answer: result.content,
    ...(result.truncated ? { truncated: true as const } : {}),
    ...(step === 'judge' ? { label: parseJudgeLabel(result.content) ?? null } : {}),
    usage: result.usage,
    cost_usd: cost,
    method_version: options.methodVersion ?? METHOD_VERSION,
    at: options.now().toISOString(),
  };
  appendEvidence(options.fileOf(subject), line);
  await reservation.settle(cost, result.usage);
  return line;
}

/** v2's measures of one run: every answer embedded whole and by sentence, read for stance against the named tensions' claims. */
async function stanceRun(
  options: RunnerOptions,
  embedding: { embed(texts: readonly string[]): Promise<Float32Array[]>; embedAnswers(texts: readonly string[]): Promise<EmbeddedAnswer[]> },
  run: {
    controlAnswers: readonly string[];
    extraRerolls: Record<string, EmbeddedAnswer[]>;
    p1Lines: readonly (readonly EvidenceCall[])[];
    pressuredAnswers: readonly (readonly [string, Record<Pressure, string>])[];
    tensions: readonly NamedTension[];
    votes: readonly (readonly [string, Partial<Record<Pressure, PressureLabel[]>>])[];
  },
): Promise<RunOutcome> {
  const { embed, embedAnswers } = embedding;
  const { controlAnswers, extraRerolls, p1Lines, pressuredAnswers, tensions, votes } = run;
  const { t } = options.settings;
  const all = [...controlAnswers, ...p1Lines.flat().map((line) => line.answer), ...pressuredAnswers.flatMap(([, after]) => [after.p2, after.p3])];
  const [embedded, claims] = await Promise.all([embedAnswers(all), embed(tensions.flatMap((t) => [t.claimA, t.claimB]))]);
  let next = 0;
  const take = () => embedded[next++]!;
  const stanceRerolls: Record<string, EmbeddedAnswer[]> = {};
  for (const model of options.panel) stanceRerolls[model.name] = range(t).map(take);
  const paraphraseAnswers = p1Lines.map((row) => Object.fromEntries(row.map((line) => [line.model, take()])));
  const pressuredStance = Object.fromEntries(pressuredAnswers.map(([name]) => [name, { p2: take(), p3: take() }]));
  return evaluateStanceRun(
    {
      tensions: tensions.map((tension, i) => ({ voiceA: tension.voiceA, voiceB: tension.voiceB, claimA: claims[2 * i]!, claimB: claims[2 * i + 1]! })),
      rerolls: stanceRerolls,
      ...(Object.keys(extraRerolls).length > 0 ? { extraRerolls } : {}),
      paraphraseAnswers,
      pressured: pressuredStance,
      votes: Object.fromEntries(votes),
    },
    options.settings.thresholds,
    options.delta ?? DEFAULT_DELTA,
  );
}

/** Answers embedded for stance: the whole (v1's distance) and each sentence (v2's side measure). */
async function embedForStance(
  embed: (texts: readonly string[]) => Promise<Float32Array[]>,
  neutral: [string, string][],
  texts: readonly string[],
): Promise<EmbeddedAnswer[]> {
  const plain = texts.map((text) => anonymise(text, neutral));
  const sentences = plain.map(answerSentences);
  const vectors = await embed([...plain, ...sentences.flat()]);
  let next = plain.length;
  return plain.map((_, i) => ({ whole: vectors[i]!, sentences: sentences[i]!.map(() => vectors[next++]!) }));
}

/** What the re-rolls where readings abstain need of their runner. */
interface RerollDeps {
  options: RunnerOptions;
  panelNames: readonly string[];
  call(subject: string, run: number, step: Step, key: string, model: CertifyModel, messages: Message[]): Promise<EvidenceCall>;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  embedAnswers(texts: readonly string[]): Promise<EmbeddedAnswer[]>;
}

/**
 * `--runs auto` (v2, ADR 0024): a named voice read on one side of a tension in some of its
 * control re-rolls but not in all is re-rolled again, one at a time, until T of them were read,
 * or it was read on both sides (noise, which more re-rolls cannot undo), or it was re-rolled 2T
 * times (wantsAnotherReroll). A voice whose re-rolls were all read, or none, draws nothing.
 */
async function abstentionRerolls(
  deps: RerollDeps,
  subject: string,
  question: string,
  run: number,
  tensions: readonly NamedTension[],
  controlAnswers: readonly string[],
): Promise<Record<string, EmbeddedAnswer[]>> {
  const { options, panelNames, call, embed, embedAnswers } = deps;
  const { t } = options.settings;
  const scope = keyScope(subject, options.attempt);
  const named = tensions.filter((x) => x.voiceA !== x.voiceB && panelNames.includes(x.voiceA) && panelNames.includes(x.voiceB));
  if (named.length === 0) return {};
  const [base, claims] = await Promise.all([embedAnswers(controlAnswers), embed(named.flatMap((x) => [x.claimA, x.claimB]))]);
  const readers = named.map((_, i) => sideReader({ claimA: claims[2 * i]!, claimB: claims[2 * i + 1]! }, base, options.delta ?? DEFAULT_DELTA));
  const voices = [...new Set(named.flatMap((x) => [x.voiceA, x.voiceB]))];
  const extra: Record<string, EmbeddedAnswer[]> = {};
  await Promise.all(
    voices.map(async (voice) => {
      const model = options.panel.find((member) => member.name === voice)!;
      const own = base.slice(panelNames.indexOf(voice) * t, (panelNames.indexOf(voice) + 1) * t);
      const mine = named.flatMap((x, i) => (x.voiceA === voice || x.voiceB === voice ? [readers[i]!] : []));
      const sides: Side[][] = mine.map((read) => own.map(read));
      const drawn: EmbeddedAnswer[] = [];
      while (drawn.length < t && sides.some((row) => wantsAnotherReroll(row, t))) {
        const roll = t + drawn.length;
        const line = await call(subject, run, 'control', stepKeys.control(scope, run, voice, roll), model, answerPrompt(question));
        const [answer] = await embedAnswers([line.answer]);
        drawn.push(answer!);
        mine.forEach((read, i) => sides[i]!.push(read(answer)));
      }
      if (drawn.length > 0) extra[voice] = drawn;
    }),
  );
  return extra;
}

export function createRunner(options: RunnerOptions) {
  const started = Date.now();
  let made = 0;
  let reused = 0;
  const panelNames = options.panel.map((model) => model.name);

  const report = () => {
    const done = made + reused;
    const elapsed = Date.now() - started;
    options.onProgress?.({
      done,
      total: options.total,
      reused,
      spentUsd: options.guard.spentUsd(),
      remainingMs: made === 0 ? undefined : Math.round((elapsed / made) * Math.max(0, options.total - done)),
    });
  };

  async function call(subject: string, run: number, step: Step, key: string, model: CertifyModel, messages: Message[]): Promise<EvidenceCall> {
    const logged = reusableCall(options.logged.get(key), model.modelId, messages);
    if (logged) {
      reused++;
      report();
      return logged;
    }
    return options.limit(async () => {
      const line = await paidCall(options, { subject, run, step, key, model, messages });
      made++;
      report();
      return line;
    });
  }

  // A model naming itself is style, not stance: panel names are neutralised before embedding.
  const neutral: [string, string][] = panelNames.map((name) => [name, 'A model']);
  async function embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.length === 0 ? [] : options.embedder.embed(texts.map((text) => anonymise(text, neutral)));
  }

  const embedAnswers = (texts: readonly string[]) => embedForStance(embed, neutral, texts);

  /** One independent run of the protocol on one question; v2 reads stance on the named tensions. */
  async function runOnce(subject: string, question: string, run: number, tensions: readonly NamedTension[] = []): Promise<RunOutcome> {
    const { t, k } = options.settings;
    const scope = keyScope(subject, options.attempt);
    const [controls, paraphrases] = await Promise.all([
      Promise.all(
        options.panel.map((model) =>
          Promise.all(range(t).map((roll) => call(subject, run, 'control', stepKeys.control(scope, run, model.name, roll), model, answerPrompt(question)))),
        ),
      ),
      Promise.all(
        range(k).map((index) =>
          call(subject, run, 'paraphrase', stepKeys.paraphrase(scope, run, index), options.paraphraser, paraphrasePrompt(question, index, k)),
        ),
      ),
    ]);
    const answersOf = (i: number) => controls[i]!.map((line) => line.answer);
    const vectors = await embed(options.panel.flatMap((_, i) => answersOf(i)));
    const rerolls: Record<string, Vector[]> = {};
    options.panel.forEach((model, i) => (rerolls[model.name] = vectors.slice(i * t, (i + 1) * t)));
    const peers = mostOpposedPeers(controlSpread(rerolls).centroids);
    if (options.method === 'perturbation-v2') {
      // v2: a party faces its named opponent, the peer whose claim it must hold against.
      for (const tension of [...tensions].reverse()) {
        if (!panelNames.includes(tension.voiceA) || !panelNames.includes(tension.voiceB) || tension.voiceA === tension.voiceB) continue;
        peers[tension.voiceA] = tension.voiceB;
        peers[tension.voiceB] = tension.voiceA;
      }
    }
    const own = (name: string) => answersOf(panelNames.indexOf(name))[0]!;
    const extraRerolls =
      options.method === 'perturbation-v2' && options.abstentionRerolls
        ? abstentionRerolls(
            { options, panelNames, call, embed, embedAnswers },
            subject,
            question,
            run,
            tensions,
            options.panel.flatMap((_, i) => answersOf(i)),
          )
        : Promise.resolve({});

    const p1 = Promise.all(
      paraphrases.map((line, index) =>
        Promise.all(
          options.panel.map((model) => call(subject, run, 'p1', stepKeys.p1(scope, run, index, model.name), model, answerPrompt(cleanParaphrase(line.answer)))),
        ),
      ),
    );
    const pressuredAnswers: [string, Record<Pressure, string>][] = [];
    const pressured = Promise.all(
      options.panel.map(async (model) => {
        const peer = peers[model.name];
        const [p2, p3] = await Promise.all([
          call(
            subject,
            run,
            'p2',
            stepKeys.pressure(scope, run, 'p2', model.name),
            model,
            peerPressurePrompt(question, own(model.name), peer ? own(peer) : ''),
          ),
          call(subject, run, 'p3', stepKeys.pressure(scope, run, 'p3', model.name), model, stanceFlipPrompt(question, own(model.name))),
        ]);
        const after: Record<Pressure, string> = { p2: p2.answer, p3: p3.answer };
        pressuredAnswers.push([model.name, after]);
        const votes: Partial<Record<Pressure, PressureLabel[]>> = {};
        await Promise.all(
          PRESSURES.map(async (pressure) => {
            const labels = await Promise.all(
              options.judges.map(async (judge) => {
                const key = stepKeys.judge(scope, run, pressure, model.name, judge.name);
                const blinding = blind(model.name, peer, panelNames, seededRandom(seedOf(options.seed, key)));
                const hide = (text: string) => anonymise(text, blinding.replacements);
                const messages = judgePrompt({
                  question,
                  voice: blinding.voice,
                  before: hide(own(model.name)),
                  challenge: hide(challengeText(pressure, peer ? own(peer) : undefined, blinding.peerVoice)),
                  after: hide(after[pressure]),
                  labelOrder: blinding.labelOrder,
                });
                return (await call(subject, run, 'judge', key, judge, messages)).label ?? undefined;
              }),
            );
            // An unreadable verdict is left out; the majority is over the judges that answered.
            votes[pressure] = labels.filter((label): label is PressureLabel => label !== undefined);
          }),
        );
        return [model.name, votes] as const;
      }),
    );
    const [p1Lines, votes, extra] = await Promise.all([p1, pressured, extraRerolls]);
    if (options.method === 'perturbation-v2') {
      const controlAnswers = options.panel.flatMap((_, i) => answersOf(i));
      return stanceRun(options, { embed, embedAnswers }, { controlAnswers, extraRerolls: extra, p1Lines, pressuredAnswers, tensions, votes });
    }
    const p1Vectors = await embed(p1Lines.flat().map((line) => line.answer));
    const paraphraseAnswers = p1Lines.map((row, index) => Object.fromEntries(row.map((line, m) => [line.model, p1Vectors[index * options.panel.length + m]!])));
    return evaluateRun({ rerolls, paraphraseAnswers, votes: Object.fromEntries(votes) }, options.settings.thresholds);
  }

  return { runOnce, call, counts: () => ({ made, reused }) };
}
