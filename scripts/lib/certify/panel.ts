/** The certification's models from the configured panel (PANEL_CONFIG): who is tested, who rewords, who judges. */
import { createOpenAICompatibleModel } from '../../../providers/chat.ts';
import type { PanelConfig, PanelModelConfig } from '../../../providers/panel-config.ts';
import type { CertifyModel } from './runner.ts';

/** Judges answer one short JSON object; a paraphrase is one question. */
export const JUDGE_MAX_TOKENS = 60;
export const PARAPHRASE_MAX_TOKENS = 200;

export interface CertifyPanel {
  panel: CertifyModel[];
  paraphraser: CertifyModel;
  judges: CertifyModel[];
}

export interface PanelChoice {
  /** Judge names (default: every model in `extra`). */
  judges?: string[] | undefined;
  /** Paraphraser name (default: the first model in `extra`). */
  paraphraser?: string | undefined;
}

export function certifyPanel(config: PanelConfig, env: NodeJS.ProcessEnv, choice: PanelChoice = {}): CertifyPanel {
  const all = new Map([...config.panel, ...config.extra].map((model) => [model.name, model] as const));
  const onPanel = new Set(config.panel.map((model) => model.name));
  const pick = (name: string, role: string): PanelModelConfig => {
    const model = all.get(name);
    if (!model) throw new Error(`${role} "${name}" is not a model in the panel configuration (${[...all.keys()].join(', ')})`);
    if (onPanel.has(name)) throw new Error(`${role} "${name}" sits on the panel under test; choose a model from extra`);
    return model;
  };
  const judgeNames = choice.judges ?? config.extra.map((model) => model.name);
  if (judgeNames.length === 0)
    throw new Error(
      'certification needs at least one judge that is not on the panel: add models under `extra` in the panel configuration (three make a majority)',
    );
  const paraphraserName = choice.paraphraser ?? config.extra[0]?.name;
  if (!paraphraserName) throw new Error('certification needs a paraphraser that is not on the panel: add a model under `extra` in the panel configuration');
  const wrap = (model: PanelModelConfig, maxTokens?: number): CertifyModel => {
    const chat = createOpenAICompatibleModel({ config: model, defaults: config.defaults, env });
    const budget = maxTokens ?? model.max_tokens ?? config.defaults.max_tokens;
    return {
      name: model.name,
      modelId: model.model,
      maxTokens: budget,
      price: model.price,
      complete: async (request, signal) => {
        const result = await chat.complete({ messages: request.messages, maxTokens: request.maxTokens }, signal);
        return { content: result.content, usage: result.usage, ...(result.truncated ? { truncated: true } : {}) };
      },
    };
  };
  return {
    panel: config.panel.map((model) => wrap(model)),
    paraphraser: wrap(pick(paraphraserName, 'paraphraser'), PARAPHRASE_MAX_TOKENS),
    judges: judgeNames.map((name) => wrap(pick(name, 'judge'), JUDGE_MAX_TOKENS)),
  };
}
