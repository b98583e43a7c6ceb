/**
 * Chat models behind one interface. The implementation speaks to any OpenAI-compatible
 * endpoint through the `openai` SDK, which retries 408/409/429/5xx with backoff and
 * honours Retry-After; we add the per-model timeout, usage and cost.
 */
import OpenAI from 'openai';
import type { PanelConfig, PanelModelConfig } from './panel-config.ts';
import { toWellFormedText } from '../core/well-formed-text.ts';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  json?: boolean;
  maxTokens?: number;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface ChatResult {
  content: string;
  usage: Usage;
  cost_usd: number;
  latency_ms: number;
}

export type ProviderFailure = 'timeout' | 'rate_limited' | 'server_error' | 'connection' | 'auth' | 'bad_request' | 'malformed' | 'empty' | 'aborted';

export class ProviderError extends Error {
  constructor(
    readonly failure: ProviderFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

export interface ChatModel {
  readonly name: string;
  readonly family: string;
  readonly lab: string;
  readonly modelId: string;
  complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult>;
}

export function estimateCost(usage: Usage, price: PanelModelConfig['price']): number {
  if (!price) return 0;
  return (usage.prompt_tokens * price.input_per_mtok + usage.completion_tokens * price.output_per_mtok) / 1_000_000;
}

function classify(error: unknown): ProviderError {
  if (error instanceof ProviderError) return error;
  if (error instanceof OpenAI.APIConnectionTimeoutError) return new ProviderError('timeout', 'the model did not answer in time');
  if (error instanceof OpenAI.APIUserAbortError) return new ProviderError('aborted', 'the call was cancelled');
  if (error instanceof OpenAI.APIConnectionError) return new ProviderError('connection', `connection failed: ${error.message}`);
  if (error instanceof OpenAI.APIError) {
    const status = error.status;
    if (status === 429) return new ProviderError('rate_limited', 'rate limited by the provider (429) after retries', status);
    if (status === 401 || status === 403) return new ProviderError('auth', `the provider refused the key (${status})`, status);
    if (status !== undefined && status >= 500) return new ProviderError('server_error', `provider error ${status} after retries`, status);
    return new ProviderError('bad_request', `provider answered ${status ?? 'an error'}: ${error.message.slice(0, 200)}`, status);
  }
  if (error instanceof SyntaxError) return new ProviderError('malformed', 'the provider sent a body that is not JSON');
  return new ProviderError('malformed', `unexpected provider response: ${(error as Error)?.message ?? String(error)}`.slice(0, 300));
}

export interface ChatModelOptions {
  config: PanelModelConfig;
  defaults: PanelConfig['defaults'];
  env: NodeJS.ProcessEnv;
}

export function createOpenAICompatibleModel({ config, defaults, env }: ChatModelOptions): ChatModel {
  const apiKey = config.api_key_env ? env[config.api_key_env] : 'unused';
  if (!apiKey) throw new Error(`${config.name}: environment variable ${config.api_key_env} is not set`);
  const timeout = config.timeout_ms ?? defaults.timeout_ms;
  const client = new OpenAI({ baseURL: config.base_url, apiKey, timeout, maxRetries: config.max_retries ?? defaults.max_retries });
  return {
    name: config.name,
    family: config.family,
    lab: config.lab,
    modelId: config.model,
    async complete(request, signal) {
      const started = performance.now();
      try {
        const completion = await client.chat.completions.create(
          {
            model: config.model,
            messages: request.messages,
            max_tokens: request.maxTokens ?? config.max_tokens ?? defaults.max_tokens,
            ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
            ...(request.json ? { response_format: { type: 'json_object' as const } } : {}),
          },
          { ...(signal ? { signal } : {}) },
        );
        const content = completion.choices?.[0]?.message?.content;
        if (typeof content !== 'string' || content.trim() === '') throw new ProviderError('empty', 'the model returned no text');
        const usage = {
          prompt_tokens: completion.usage?.prompt_tokens ?? 0,
          completion_tokens: completion.usage?.completion_tokens ?? 0,
        };
        // NUL and unpaired surrogates have no storable form on every driver: removed as the text
        // arrives, so what is shown is exactly what is kept and persisted (ADR 0009).
        return { content: toWellFormedText(content), usage, cost_usd: estimateCost(usage, config.price), latency_ms: Math.round(performance.now() - started) };
      } catch (error) {
        throw classify(error);
      }
    },
  };
}

export interface Panel {
  members: ChatModel[];
  chair: ChatModel[];
  config: PanelConfig;
}

/** The panel from config; members whose key is missing are left out and named. */
export function createPanel(config: PanelConfig, env: NodeJS.ProcessEnv): { panel: Panel | undefined; missing: string[] } {
  const missing: string[] = [];
  const build = (model: PanelModelConfig) => {
    try {
      return createOpenAICompatibleModel({ config: model, defaults: config.defaults, env });
    } catch (error) {
      missing.push((error as Error).message);
      return undefined;
    }
  };
  const members = config.panel.map(build).filter((model): model is ChatModel => model !== undefined);
  const byName = new Map([...members.map((model) => [model.name, model] as const)]);
  for (const extra of config.extra) {
    const model = build(extra);
    if (model) byName.set(model.name, model);
  }
  const chair = [config.chair.use, ...config.chair.fallbacks].map((name) => byName.get(name)).filter((model): model is ChatModel => model !== undefined);
  if (members.length < 2 || chair.length === 0) return { panel: undefined, missing };
  return { panel: { members, chair, config }, missing };
}
