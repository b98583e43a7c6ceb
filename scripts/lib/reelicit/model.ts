/** A panel model or judge as re-elicitation calls it: reelicit.ts asks, judge-pair.ts labels. */
export interface ReelicitModel {
  /** Voice label written as the answer's `model`. */
  name: string;
  /** Model version stamped as the answer's `model_id` (must be in models.yaml). */
  modelId: string;
  lab?: string;
  maxTokens: number;
  price?: { input_per_mtok: number; output_per_mtok: number } | undefined;
  complete(
    messages: { role: 'system' | 'user' | 'assistant'; content: string }[],
    maxTokens: number,
  ): Promise<{ content: string; usage: { prompt_tokens: number; completion_tokens: number }; truncated: boolean }>;
}
