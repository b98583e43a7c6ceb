/**
 * `npm run reelicit`: a stale record's question, re-asked verbatim (no system prompt) to the
 * configured panel, written as a new record with `re_elicits` set, ready for a pull request.
 * `--plan` sends nothing. An answer cut off at max_tokens (finish_reason "length") is kept
 * verbatim and marked `truncated: true`, as the content schema asks.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { callCeilingUsd, estimateTokens, usageCostUsd } from '../../../core/certify/plan.ts';
import { deriveFreshness } from '../../../core/records.ts';
import { createOpenAICompatibleModel } from '../../../providers/chat.ts';
import type { PanelConfig } from '../../../providers/panel-config.ts';
import type { DivergenceFrontmatter } from '../../../schemas/content.ts';
import type { SpendGuard } from '../certify/spend-guard.ts';
import { createLimiter } from '../certify/spend-guard.ts';
import { stringifyMarkdown } from '../../../content-files/frontmatter.ts';
import type { PressureLabel } from '../../../core/certify/protocol.ts';
import { LONGITUDINAL_FILE_SUFFIX, type LongitudinalJudgement } from '../../../schemas/certification.ts';
import { judgePair, JUDGE_REPLY_TOKENS } from './judge-pair.ts';
import type { ReelicitModel } from './model.ts';
import { loadContent, type LoadedContent, type MarkdownEntry } from '../../../content-files/load-content.ts';

export type { ReelicitModel } from './model.ts';

export type ReelicitSelection = { stale: true } | { ids: string[] };

export interface ReelicitOptions {
  contentDir: string;
  selection: ReelicitSelection;
  panel: ReelicitModel[];
  /** Judges off the panel (the configuration's `extra`): when given, each family's move is labelled too. */
  judges?: ReelicitModel[];
  guard: SpendGuard;
  plan?: boolean;
  write?: boolean;
  concurrency?: number;
  now?: () => Date;
}

export interface ReelicitRecordReport {
  original: string;
  question: string;
  id?: string;
  file?: string;
  answers?: { model: string; model_id: string; truncated: boolean }[];
  /** Judges' majority label of each family's move since the earlier record, when judges are configured. */
  judged?: Record<string, PressureLabel | null>;
  written: boolean;
  error?: string;
}

export interface ReelicitReport {
  plan: boolean;
  calls: number;
  estimatedCostUsd: number;
  spentUsd: number;
  records: ReelicitRecordReport[];
  skipped: { id: string; reason: string }[];
}

export class ReelicitError extends Error {}

export const REELICIT_METHOD = 'Re-asked verbatim, no system prompt, to the configured panel by `npm run reelicit`; answers are verbatim.';

function select(content: LoadedContent, selection: ReelicitSelection): { chosen: MarkdownEntry<DivergenceFrontmatter>[]; skipped: ReelicitReport['skipped'] } {
  const byId = new Map(content.divergences.map((entry) => [entry.data.id, entry]));
  if ('ids' in selection) {
    const unknown = selection.ids.filter((id) => !byId.has(id));
    if (unknown.length > 0) throw new ReelicitError(`not a divergence record: ${unknown.join(', ')}`);
    return { chosen: selection.ids.map((id) => byId.get(id)!), skipped: [] };
  }
  const skipped: ReelicitReport['skipped'] = [];
  const chosen = content.divergences.filter((entry) => {
    if (!deriveFreshness(entry.data, content.registry).stale) return false;
    const fresh = content.divergences.find((later) => later.data.re_elicits === entry.data.id && !deriveFreshness(later.data, content.registry).stale);
    if (fresh) skipped.push({ id: entry.data.id, reason: `already re-elicited with current models by ${fresh.data.id}` });
    return !fresh;
  });
  return { chosen, skipped };
}

/** Next free number in the original's series (D or L), so the pair sorts together by prefix. */
function nextIds(content: LoadedContent, originals: readonly string[]): string[] {
  const taken = new Set(content.divergences.map((entry) => entry.data.id));
  const out: string[] = [];
  for (const original of originals) {
    const match = /^(.*-[DL])(\d+)$/.exec(original)!;
    const series = match[1]!;
    const numbers = [...taken].filter((id) => id.startsWith(series) && /^\d+$/.test(id.slice(series.length))).map((id) => Number(id.slice(series.length)));
    const id = `${series}${Math.max(0, ...numbers) + 1}`;
    taken.add(id);
    out.push(id);
  }
  return out;
}

export async function reelicit(options: ReelicitOptions): Promise<ReelicitReport> {
  const content = loadContent(options.contentDir);
  const known = new Set(content.registry.models.map((model) => model.model_id));
  const unknown = options.panel.filter((model) => !known.has(model.modelId));
  if (unknown.length > 0) {
    throw new ReelicitError(
      `panel model versions not in models.yaml: ${unknown.map((model) => `${model.name} (${model.modelId})`).join(', ')}; add them there (with superseded_by on the versions they replace) first`,
    );
  }
  const { chosen, skipped } = select(content, options.selection);
  const judges = options.judges ?? [];
  const calls = chosen.length * options.panel.length * (1 + judges.length);
  const estimatedCostUsd = chosen.reduce(
    (sum, entry) =>
      sum +
      options.panel.reduce((inner, model) => inner + callCeilingUsd(estimateTokens(entry.data.question), model.maxTokens, model.price), 0) +
      // A judge reads the question and both answers: at most two completion budgets of text.
      options.panel.length *
        judges.reduce(
          (inner, judge) =>
            inner +
            callCeilingUsd(
              estimateTokens(entry.data.question) + 2 * Math.max(...options.panel.map((model) => model.maxTokens)) + 200,
              JUDGE_REPLY_TOKENS,
              judge.price,
            ),
          0,
        ),
    0,
  );
  const report: ReelicitReport = { plan: Boolean(options.plan), calls, estimatedCostUsd, spentUsd: 0, records: [], skipped };
  if (options.plan) {
    report.records = chosen.map((entry) => ({ original: entry.data.id, question: entry.data.question, written: false }));
    return report;
  }
  const ids = nextIds(
    content,
    chosen.map((entry) => entry.data.id),
  );
  const limit = createLimiter(options.concurrency ?? 4);
  const now = options.now ?? (() => new Date());
  for (const [index, entry] of chosen.entries()) {
    const id = ids[index]!;
    const question = entry.data.question;
    const record: ReelicitRecordReport = { original: entry.data.id, question, id, written: false };
    report.records.push(record);
    try {
      const answers = await Promise.all(
        options.panel.map((model) =>
          limit(async () => {
            const reservation = await options.guard.reserve(callCeilingUsd(estimateTokens(question), model.maxTokens, model.price), model.modelId);
            try {
              const result = await model.complete([{ role: 'user', content: question }], model.maxTokens);
              await reservation.settle(usageCostUsd(result.usage, model.price), result.usage);
              return { model, text: result.content, at: now().toISOString(), truncated: result.truncated };
            } catch (error) {
              await reservation.release();
              throw error;
            }
          }),
        ),
      );
      record.answers = answers.map((answer) => ({ model: answer.model.name, model_id: answer.model.modelId, truncated: answer.truncated }));
      const empty = answers.filter((answer) => answer.text.trim() === '').map((answer) => answer.model.name);
      if (empty.length > 0) throw new ReelicitError(`empty answers from ${empty.join(', ')}`);
      const data = {
        id,
        date: now().toISOString().slice(0, 10),
        question,
        ...(entry.data.cluster ? { cluster: entry.data.cluster } : {}),
        method: REELICIT_METHOD,
        certification: { tier: 'C0' },
        re_elicits: entry.data.id,
        provenance: { source: 'npm run reelicit', persisted_at: now().toISOString() },
        answers: answers.map((answer) => ({
          model: answer.model.name,
          model_id: answer.model.modelId,
          ...(answer.model.lab ? { lab: answer.model.lab } : {}),
          date: answer.at,
          text: answer.text,
          ...(answer.truncated ? { truncated: true } : {}),
        })),
      };
      const markdown = stringifyMarkdown(data, '');
      record.file = `divergences/${id}.md`;
      const judgement =
        judges.length > 0
          ? await judgePair({
              question,
              earlier: { id: entry.data.id, answers: entry.data.answers },
              later: { id, date: data.date, answers: data.answers },
              judges,
              guard: options.guard,
              at: now().toISOString(),
            })
          : undefined;
      if (judgement) record.judged = Object.fromEntries(Object.entries(judgement.labels).map(([model, value]) => [model, value.label]));
      if (options.write) writeValidated(options.contentDir, record.file, markdown, judgement);
      record.written = Boolean(options.write);
    } catch (error) {
      record.error = (error as Error).message;
    }
  }
  report.spentUsd = options.guard.spentUsd();
  return report;
}

/** Writes the record, then validates the whole content folder; a record that does not validate is removed again. */
function writeValidated(contentDir: string, relative: string, markdown: string, judgement?: LongitudinalJudgement): void {
  const file = path.join(contentDir, relative);
  if (existsSync(file)) throw new ReelicitError(`${relative} already exists`);
  const judged = judgement ? file.replace(/\.md$/, LONGITUDINAL_FILE_SUFFIX) : undefined;
  writeFileSync(file, markdown);
  if (judged) writeFileSync(judged, `${JSON.stringify(judgement, null, 2)}\n`);
  try {
    loadContent(contentDir);
  } catch (error) {
    rmSync(file, { force: true });
    if (judged) rmSync(judged, { force: true });
    throw new ReelicitError(`the new record does not validate, so it was not kept: ${(error as Error).message}`);
  }
}

/** The configured panel as re-elicitation voices: each model's name, version, lab and price. */
export function reelicitPanel(config: PanelConfig, env: NodeJS.ProcessEnv): ReelicitModel[] {
  return config.panel.map((model) => {
    const chat = createOpenAICompatibleModel({ config: model, defaults: config.defaults, env });
    return {
      name: model.name,
      modelId: model.model,
      ...(model.lab ? { lab: model.lab } : {}),
      maxTokens: model.max_tokens ?? config.defaults.max_tokens,
      price: model.price,
      complete: async (messages, maxTokens) => {
        const result = await chat.complete({ messages, maxTokens });
        return { content: result.content, usage: result.usage, truncated: result.truncated };
      },
    };
  });
}

/** The configuration's `extra` models as judges of each family's move (none when `extra` is empty). */
export function reelicitJudges(config: PanelConfig, env: NodeJS.ProcessEnv): ReelicitModel[] {
  return reelicitPanel({ ...config, panel: config.extra }, env);
}
