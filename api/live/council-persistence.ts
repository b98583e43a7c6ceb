/**
 * Committing live councils as divergence records (spec §4.6, §5 rule 3): a council result
 * is kept under its council_id for a bounded time, so an operator commits exactly what was
 * shown, with no model call, and each kept result at most once.
 */
import { createDivergenceSchema } from '../../schemas/content.ts';
import { stringifyMarkdown } from '../../content-files/frontmatter.ts';
import { councilToFrontmatter, type CouncilResult } from '../../core/live/council.ts';
import { encodeParam } from '../../core/url.ts';
import { apiError } from '../../schemas/errors.ts';
import { applyPersistedRecords, type Corpus } from '../load-artifacts.ts';
import type { RecordsStore } from '../../storage/records.ts';

/** How long a council result stays kept (by its council_id) for an operator to persist it. */
export const COUNCIL_KEEP_MS = 24 * 60 * 60 * 1000;

export function councilNotFound(councilId: string) {
  return apiError(
    'COUNCIL_NOT_FOUND',
    `no council result is kept under "${councilId}" (unknown, or older than ${COUNCIL_KEEP_MS / 3_600_000} h)`,
    'Nothing was stored. Run the council again (GET /api/council?q=<question>), read the result, then persist it with POST /api/council {"council_id": "<its council_id>", "persist": true} within 24 h.',
    { suggestedNextCall: { method: 'GET', path: '/api/council', query: { q: '<your question>' } } },
  );
}

export function createCouncilPersistence({ corpus, store, now }: { corpus: Corpus; store: RecordsStore; now: () => Date }) {
  function nextRecordId(): string {
    let id = `${corpus.site.id_prefix}-D${now().getTime()}`;
    while (corpus.divergenceById.has(id)) id = `${corpus.site.id_prefix}-D${Number(id.split('-D')[1]) + 1}`;
    return id;
  }

  /** Validates a council result as a divergence record, stores it under `id`, and serves it at once. */
  async function persistCouncil(result: CouncilResult, id: string = nextRecordId()) {
    if (result.n_models < 2) {
      throw apiError(
        'NOT_PERSISTABLE',
        'fewer than two voices answered, so there is no divergence record to commit',
        'Retry the council later; nothing was stored.',
        { retryable: true },
      );
    }
    const persistedAt = now().toISOString();
    const frontmatter = councilToFrontmatter(result, id, persistedAt);
    const parsed = createDivergenceSchema(corpus.site.id_prefix).safeParse(frontmatter);
    if (!parsed.success) {
      throw apiError(
        'NOT_PERSISTABLE',
        `the council result is not a valid divergence record: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
        'Nothing was stored. Retry the council.',
        { retryable: true },
      );
    }
    const record = { id, frontmatter: frontmatter as Record<string, unknown>, body: '', persisted_at: persistedAt };
    await store.saveRecord(record);
    applyPersistedRecords(corpus, [record], now());
    return {
      id,
      href: `/api/divergences?id=${encodeParam(id)}`,
      persisted_at: persistedAt,
      content_path: `content/divergences/${id}.md`,
      markdown: stringifyMarkdown(frontmatter, ''),
    };
  }

  /**
   * Persists a kept council result exactly as it was shown, with no model call. Each kept
   * result becomes at most one record: a second persist answers the first one's record.
   */
  async function persistKeptCouncil(councilId: string) {
    const kept = await store.getCouncil(councilId, now());
    if (!kept) throw councilNotFound(councilId);
    const shown = { council_id: kept.id, kept_until: kept.expires_at, ...(kept.result as CouncilResult) };
    const earlier = async (recordId: string) => ({
      created: false,
      shown,
      persisted: {
        id: recordId,
        href: `/api/divergences?id=${encodeParam(recordId)}`,
        content_path: `content/divergences/${recordId}.md`,
        already_persisted: true,
      },
    });
    if (kept.persisted_id) return earlier(kept.persisted_id);
    const id = nextRecordId();
    if (!(await store.setCouncilPersisted(councilId, id, null))) {
      const winner = await store.getCouncil(councilId, now());
      if (winner?.persisted_id) return earlier(winner.persisted_id);
      throw councilNotFound(councilId);
    }
    try {
      return { created: true, shown, persisted: await persistCouncil(kept.result as CouncilResult, id) };
    } catch (error) {
      await store.setCouncilPersisted(councilId, null, id).catch(() => {});
      throw error;
    }
  }

  return { persistCouncil, persistKeptCouncil };
}
