/**
 * What the server does before it says it is ready (GET /api/ready): the question embedder's
 * model loaded, then a few searches run, so the first clients do not pay for first-run code
 * paths (the JIT) and for the collector moving what loading left in the young generation
 * (scavenges of 12–21 ms each, several, at a million passages; bench/README.md).
 */
import type { Embedder } from '../core/ports/embedder.ts';
import type { SearchIndex } from '../core/search/search-index.ts';

/** Searches run by the warm-up: enough for the collector to settle at 1M passages (about 1 s there). */
export const WARM_UP_SEARCHES = 12;

/**
 * The warm-up's questions: the titles of records spread evenly through the corpus, the
 * deployment's own words (none hard-coded), each once.
 */
export function warmUpQuestions(records: readonly { title: string }[], count: number): string[] {
  const questions = new Set<string>();
  const step = Math.max(1, Math.floor(records.length / count));
  for (let at = 0; at < records.length && questions.size < count; at += step) {
    const title = records[at]!.title.trim();
    if (title !== '') questions.add(title);
  }
  return [...questions];
}

/**
 * Loads the embedder's model, then runs the searches one after another through `search` (the
 * index's own, not the metrics' timed one: these are not clients' questions). A failure says
 * which step failed: it is the reason GET /api/ready gives.
 *
 * `remote` (an embeddings endpoint, EMBEDDINGS_CONFIG): there is no model here to load, and an
 * endpoint that is slow or down does not make this process unready — its questions are answered
 * from the words alone meanwhile (core/search/vectors.ts) and GET /api/ready shows how the last
 * one went — so its embeddings failing or coming late fail no step.
 */
export async function warmUp(
  embedder: Embedder,
  search: SearchIndex['search'],
  records: readonly { title: string }[],
  count = WARM_UP_SEARCHES,
  options: { remote?: boolean } = {},
): Promise<{ searches: number; ms: number }> {
  const started = performance.now();
  await embedder.embed(['How does the service warm up?']).catch((error: unknown) => {
    if (!options.remote) throw new Error(`the question embedder failed: ${(error as Error).message}`);
  });
  const questions = warmUpQuestions(records, count);
  for (const question of questions) {
    await search(question, { limit: 8, ...(options.remote ? { onVectorsUnavailable: () => {} } : {}) }).catch((error: unknown) => {
      throw new Error(`a warm-up search failed: ${(error as Error).message}`);
    });
  }
  return { searches: questions.length, ms: Math.round(performance.now() - started) };
}
