/**
 * Chat models behind one interface. The implementation speaks to any OpenAI-compatible
 * endpoint through the `openai` SDK (its own retries off); call-policy.ts gives each call
 * one deadline across its retries. We add usage, cost, truncation and the cost bound that
 * the spending ceiling reserves before a call.
 */
import OpenAI from 'openai';
import { backoffMs, maxPromptTokens, RETRYABLE, retryAfterMs, sleep } from './call-policy.ts';
import type { PanelConfig, PanelModelConfig } from './panel-config.ts';
import { toWellFormedText } from '../core/well-formed-text.ts';

export {
  ProviderError,
  type ChatMessage,
  type ChatRequest,
  type Usage,
  type ChatResult,
  type ProviderFailure,
  type ChatModel,
  type Panel,
} from '../core/ports/chat.ts';
import { ProviderError, type ChatModel, type ChatRequest, type ChatResult, type Usage, type Panel } from '../core/ports/chat.ts';

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
    if (status === 429) return new ProviderError('rate_limited', 'rate limited by the provider (429)', status);
    if (status === 401 || status === 403) return new ProviderError('auth', `the provider refused the key (${status})`, status);
    if (status !== undefined && status >= 500) return new ProviderError('server_error', `provider error ${status}`, status);
    return new ProviderError('bad_request', `provider answered ${status ?? 'an error'}: ${error.message.slice(0, 200)}`, status);
  }
  if (error instanceof SyntaxError) return new ProviderError('malformed', 'the provider sent a body that is not JSON');
  return new ProviderError('malformed', `unexpected provider response: ${(error as Error)?.message ?? String(error)}`.slice(0, 300));
}

/** The failure a call ends with once its signals are known: a caller's abort and the deadline win (also providers/openai-embedder.ts). */
export function settleFailure(error: unknown, caller: AbortSignal | undefined, deadline: AbortSignal, timeout: number, attempts: number): ProviderError {
  if (caller?.aborted) {
    const reason = caller.reason as unknown;
    if (reason instanceof ProviderError) return reason;
    return new ProviderError('aborted', 'the call was cancelled');
  }
  if (deadline.aborted)
    return new ProviderError('timeout', `the model did not answer within its deadline of ${timeout} ms (${attempts} attempt${attempts === 1 ? '' : 's'})`);
  const failure = classify(error);
  if (attempts > 1 && RETRYABLE.has(failure.failure))
    return new ProviderError(failure.failure, `${failure.message} after ${attempts} attempts`, failure.status, failure.spent);
  return failure;
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
  const maxRetries = config.max_retries ?? defaults.max_retries;
  const maxTokens = config.max_tokens ?? defaults.max_tokens;
  const client = new OpenAI({ baseURL: config.base_url, apiKey, timeout, maxRetries: 0 });
  const tokensOf = (request: ChatRequest) => request.maxTokens ?? maxTokens;

  async function attempt(request: ChatRequest, signal: AbortSignal, started: number): Promise<ChatResult> {
    const completion = await client.chat.completions.create(
      {
        model: config.model,
        messages: request.messages,
        max_tokens: tokensOf(request),
        ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
        ...(request.json ? { response_format: { type: 'json_object' as const } } : {}),
      },
      { signal, maxRetries: 0 },
    );
    const choice = completion.choices?.[0];
    const usage = { prompt_tokens: completion.usage?.prompt_tokens ?? 0, completion_tokens: completion.usage?.completion_tokens ?? 0 };
    const cost_usd = estimateCost(usage, config.price);
    // NUL and unpaired surrogates have no storable form on every driver: removed as the text
    // arrives, so what is shown is exactly what is kept and persisted (ADR 0009).
    const content = toWellFormedText(typeof choice?.message?.content === 'string' ? choice.message.content : '');
    const finish_reason = choice?.finish_reason ?? null;
    const truncated = finish_reason === 'length';
    // An empty answer cut at max_tokens (a reasoning model that spent the whole budget
    // thinking) is a truncated result, not a malformed one: the caller may retry with room.
    if (content.trim() === '' && !truncated) throw new ProviderError('empty', 'the model returned no text', undefined, { usage, cost_usd });
    return { content, usage, cost_usd, latency_ms: Math.round(performance.now() - started), truncated, finish_reason };
  }

  return {
    name: config.name,
    family: config.family,
    lab: config.lab,
    modelId: config.model,
    maxTokens,
    maxCostUsd(request) {
      return estimateCost({ prompt_tokens: maxPromptTokens(request.messages), completion_tokens: tokensOf(request) }, config.price);
    },
    async complete(request, signal) {
      const started = performance.now();
      const deadline = AbortSignal.timeout(timeout);
      const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
      for (let attempts = 1; ; attempts++) {
        try {
          if (combined.aborted) throw combined.reason;
          return await attempt(request, combined, started);
        } catch (error) {
          const failure = settleFailure(error, signal, deadline, timeout, attempts);
          if (!RETRYABLE.has(failure.failure) || attempts > maxRetries) throw failure;
          const headers = error instanceof OpenAI.APIError ? error.headers : undefined;
          const wait = backoffMs(attempts - 1, retryAfterMs(headers, Date.now()));
          // A retry that could only start after the deadline is not made.
          if (performance.now() - started + wait >= timeout) throw failure;
          try {
            await sleep(wait, combined);
          } catch (aborted) {
            throw settleFailure(aborted, signal, deadline, timeout, attempts);
          }
        }
      }
    },
  };
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
