/**
 * The server's question embedder (issue 43, part 4): the cached embedder behind a deadline, and
 * what it last did, for GET /api/ready. Past the deadline the question's embedding rejects with
 * EmbeddingDeadlineError and the search answers from the words alone (core/search/vectors.ts);
 * the request itself goes on, and withQueryCache (embedder.ts) keeps its answer for the next ask
 * of the same question, without sending it twice meanwhile.
 *
 * The deadline:
 * - An OpenAI-compatible endpoint (EMBEDDINGS_CONFIG): `query_timeout_ms`, 400 ms by default
 *   (schemas/embeddings.ts says why).
 * - The embedded USE-lite: none. It runs in this process's worker threads and embeds a question
 *   in a few milliseconds; the only way it is late is a backlog of questions, and answering those
 *   by words would change the answers under load, the one thing its figures promise not to do.
 *   It can still fail (a worker thread lost): the search then answers by words too, as for an
 *   endpoint, instead of failing the request.
 */
import type { Embedder } from '../core/ports/embedder.ts';
import { EmbeddingDeadlineError } from '../core/ports/embedder.ts';
import { vectorsUnavailable, type VectorsUnavailable } from '../core/search/vectors.ts';
import type { ConfiguredEmbedder } from './embeddings-config.ts';
import { withQueryCache } from './embedder.ts';

/** What the last question's embedding did (GET /api/ready's `embedder.last_question`). */
export type QuestionOutcome = ({ vectors: 'used' } | ({ vectors: 'unavailable' } & VectorsUnavailable)) & { at: string };

export interface QuestionEmbedder extends Embedder {
  /** The deadline of a question's embedding; undefined: none. */
  readonly deadlineMs: number | undefined;
  /** The last question's outcome since start; undefined before the first. */
  readonly lastQuestion: QuestionOutcome | undefined;
}

export interface QuestionDeadlineOptions {
  /** Undefined: no deadline (failures are still recorded and passed on). */
  deadlineMs?: number | undefined;
  /** A line when questions stop being embedded in time, and when they are again (not one per question). */
  log?: (line: string) => void;
  now?: () => Date;
}

export function withQuestionDeadline(embedder: Embedder, options: QuestionDeadlineOptions = {}): QuestionEmbedder {
  const { deadlineMs, log = () => {}, now = () => new Date() } = options;
  let last: QuestionOutcome | undefined;

  function record(outcome: { vectors: 'used' } | ({ vectors: 'unavailable' } & VectorsUnavailable), error?: unknown): void {
    if (outcome.vectors === 'unavailable' && last?.vectors !== 'unavailable') {
      log(`question embeddings unavailable (${(error as Error | undefined)?.message ?? outcome.reason}): answering from the words alone until they come back`);
    } else if (outcome.vectors === 'used' && last?.vectors === 'unavailable') {
      log('question embeddings back: answering with both sides again');
    }
    last = { ...outcome, at: now().toISOString() };
  }

  async function embed(texts: readonly string[]): Promise<Float32Array[]> {
    const answer = embedder.embed(texts);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late =
      deadlineMs === undefined
        ? undefined
        : new Promise<never>((_resolve, reject) => {
            timer = setTimeout(() => reject(new EmbeddingDeadlineError(deadlineMs)), deadlineMs);
          });
    try {
      const vectors = await (late ? Promise.race([answer, late]) : answer);
      record({ vectors: 'used' });
      return vectors;
    } catch (error) {
      record({ vectors: 'unavailable', ...vectorsUnavailable(error) }, error);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    id: embedder.id,
    dims: embedder.dims,
    deadlineMs,
    get lastQuestion() {
      return last;
    },
    embed,
  };
}

/** The deadline of a question's embedding for the configured embedder (see the header). */
export function questionDeadlineOf(configured: ConfiguredEmbedder): number | undefined {
  // A request is given up at timeout_ms whatever the question's deadline: the earlier one holds.
  return configured.kind === 'openai-compatible' ? Math.min(configured.config.query_timeout_ms, configured.config.timeout_ms) : undefined;
}

/**
 * The question embedder of a server (api/server.ts) or of the local MCP app: the configured
 * embedder behind the query cache, `wrap` (the metrics' timing) and the deadline.
 */
export function createQuestionEmbedder(
  configured: ConfiguredEmbedder,
  options: { log?: (line: string) => void; wrap?: (embedder: Embedder) => Embedder } = {},
): QuestionEmbedder {
  const cached = withQueryCache(configured.embedder);
  return withQuestionDeadline(options.wrap ? options.wrap(cached) : cached, {
    deadlineMs: questionDeadlineOf(configured),
    ...(options.log ? { log: options.log } : {}),
  });
}

/** Whether an embedder reports its questions (a QuestionEmbedder), for GET /api/ready. */
export function isQuestionEmbedder(embedder: Embedder): embedder is QuestionEmbedder {
  return 'deadlineMs' in embedder && 'lastQuestion' in embedder;
}
