/**
 * The chat-model port: what the core needs of a model, implemented by providers/chat.ts
 * (any OpenAI-compatible endpoint through the openai SDK) and by test stand-ins. The core
 * receives a ChatModel or Panel; it never loads a provider.
 */
import type { PanelConfig } from '../../schemas/panel.ts';

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
  /** Exactly what the model said (possibly cut off: see truncated). */
  content: string;
  usage: Usage;
  cost_usd: number;
  latency_ms: number;
  /** The model stopped because it reached max_tokens (finish_reason "length"): the text is cut off. */
  truncated: boolean;
  finish_reason: string | null;
}

/**
 * Why a call gave no usable answer. `deadline`: the deliberation's own deadline passed;
 * `spending_ceiling`: the call's reservation would have crossed the ceiling, so it was not made.
 */
export type ProviderFailure =
  | 'timeout'
  | 'deadline'
  | 'rate_limited'
  | 'server_error'
  | 'connection'
  | 'auth'
  | 'bad_request'
  | 'malformed'
  | 'empty'
  | 'truncated'
  | 'aborted'
  | 'spending_ceiling';

export class ProviderError extends Error {
  constructor(
    readonly failure: ProviderFailure,
    message: string,
    readonly status?: number,
    /** What the failed call cost when the provider reported usage (e.g. an empty answer). */
    readonly spent?: { usage: Usage; cost_usd: number },
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
  /** max_tokens sent when the request does not set maxTokens. */
  readonly maxTokens: number;
  /** The most a request can cost: every prompt byte a token, plus max_tokens (reserved before the call). */
  maxCostUsd(request: ChatRequest): number;
  /**
   * One call under one deadline (timeout_ms) across its retries. `signal` aborts it early
   * (the caller went away, the job was cancelled, the deliberation's deadline passed).
   */
  complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult>;
}

export interface Panel {
  members: ChatModel[];
  chair: ChatModel[];
  config: PanelConfig;
}
