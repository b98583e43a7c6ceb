/**
 * `curate tension <key> <kind>`: records a curator's disposition of a tension. Notes and
 * synthesis drafts are written here (content/tensions/<key>.yaml; a draft also stores a pending
 * proposal); council-review asks the running server (--url, bearer INGEST_SECRET), which holds
 * the live panel and its spending ceiling.
 */
import { deriveDivergence } from '../../core/records.ts';
import { trackTensions } from '../../core/tension-identity.ts';
import { mergeMap, proposeTensionMerges, type MergeProposal } from '../../core/tension-merges.ts';
import type { Store } from '../../storage/store.ts';
import { InvalidDispositionError, recordDisposition, storeProposer } from '../../api/tensions/record-disposition.ts';
import { DISPOSITION_KINDS } from '../../schemas/content.ts';
import { DispositionRequestSchema } from '../../schemas/dispositions.ts';
import { UsageError } from './curation-list.ts';
import { loadContent } from '../../content-files/load-content.ts';
import { appendDisposition, appendTensionMerge } from '../../content-files/tension-dispositions.ts';

export interface TensionOptions {
  by?: string | undefined;
  reason?: string | undefined;
  note?: string | undefined;
  'earlier-voice'?: string | undefined;
  'moves-a'?: string | undefined;
  'moves-b'?: string | undefined;
  undecidable?: boolean | undefined;
  title?: string | undefined;
  text?: string | undefined;
  url?: string | undefined;
  content: string;
}

function requestOf(key: string, kind: string, options: TensionOptions) {
  if (!(DISPOSITION_KINDS as readonly string[]).includes(kind)) throw new UsageError(`the kind is one of ${DISPOSITION_KINDS.join(', ')}`);
  const body = Object.fromEntries(
    Object.entries({
      key,
      kind,
      by: options.by,
      reason: options.reason,
      note: options.note,
      earlier_voice: options['earlier-voice'],
      moves_a: options['moves-a'],
      moves_b: options['moves-b'],
      undecidable: options.undecidable,
      title: options.title,
      text: options.text,
    }).filter(([, value]) => value !== undefined),
  );
  const parsed = DispositionRequestSchema.safeParse(body);
  if (!parsed.success) {
    const flag = (name: string) => `--${name.replace(/_/g, '-')}`;
    throw new UsageError(
      `tension ${kind}: ${parsed.error.issues.map((issue) => `${issue.path.map(String).map(flag).join('.') || '(options)'}: ${issue.message}`).join('; ')}`,
    );
  }
  return parsed.data;
}

async function viaServer(url: string, body: unknown): Promise<unknown> {
  const secret = process.env.INGEST_SECRET;
  if (!secret) throw new UsageError('council-review through the server needs INGEST_SECRET in the environment');
  const response = await fetch(new URL('/api/tensions/dispositions', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify(body),
  });
  const answer = (await response.json().catch(() => ({}))) as { error?: { code: string; message: string } };
  if (!response.ok) throw new Error(`${answer.error?.code ?? `HTTP ${response.status}`}: ${answer.error?.message ?? 'the server refused the disposition'}`);
  return answer;
}

export async function runTensionCommand(
  key: string | undefined,
  kind: string | undefined,
  options: TensionOptions,
  openStore: () => Promise<Store>,
): Promise<Record<string, unknown>> {
  if (!key || !kind) throw new UsageError('tension needs <key> and <kind>');
  const request = requestOf(key, kind, options);
  if (request.kind === 'council-review') {
    if (!options.url) throw new UsageError('council-review runs the live panel on the server: pass --url <server> (and INGEST_SECRET)');
    return (await viaServer(options.url, request)) as Record<string, unknown>;
  }
  const content = loadContent(options.content);
  const entries = content.divergences.flatMap((entry) => deriveDivergence(entry.data, entry.body, content.registry).tensions);
  const dispositions = Object.fromEntries(content.tensions.map((entry) => [entry.data.key, entry.data.dispositions]));
  const tension = trackTensions(entries, dispositions).find((candidate) => candidate.id === key);
  if (!tension) throw new Error(`no tension has the key "${key}" in ${options.content}; GET /api/tensions lists the keys`);
  const now = () => new Date();
  let store: Store | undefined;
  try {
    return await recordDisposition(
      {
        now,
        append: (tensionKey, disposition) => appendDisposition(options.content, tensionKey, disposition),
        propose: async (proposal) => storeProposer((store ??= await openStore()), now)(proposal),
      },
      tension,
      request,
    );
  } catch (error) {
    if (error instanceof InvalidDispositionError) throw new Error(error.message, { cause: error });
    throw error;
  } finally {
    await store?.close();
  }
}

/** Merge proposals over a content folder's tensions (issue 29 item 4): same two voices, topics and claims alike. */
export function listTensionMerges(contentDir: string): { tensions: number; decided: number; proposals: MergeProposal[] } {
  const content = loadContent(contentDir);
  const entries = content.divergences.flatMap((entry) => deriveDivergence(entry.data, entry.body, content.registry).tensions);
  const dispositions = Object.fromEntries(content.tensions.map((entry) => [entry.data.key, entry.data.dispositions]));
  // Merges in force apply first; a pair a curator decided either way is not proposed again.
  const tensions = trackTensions(entries, dispositions, () => [], [], mergeMap(content.tensionMerges));
  const decided = new Set(content.tensionMerges.map((decision) => `${decision.from}\u0000${decision.into}`));
  return { tensions: tensions.length, decided: decided.size, proposals: proposeTensionMerges(tensions, undefined, decided) };
}

/** Records a curator's decision on a proposal (merged or declined), as content. */
export function decideTensionMerge(
  contentDir: string,
  from: string | undefined,
  into: string | undefined,
  decision: string | undefined,
  by: string | undefined,
) {
  if (!from || !into || (decision !== 'merged' && decision !== 'declined') || !by) {
    throw new UsageError('tension-merge needs <from key> <into key> merged|declined --by <curator>');
  }
  const proposal = listTensionMerges(contentDir).proposals.find((candidate) => candidate.from === from && candidate.into === into);
  return appendTensionMerge(contentDir, {
    from,
    into,
    decision,
    by,
    at: new Date().toISOString(),
    ...(proposal ? { similarity: proposal.similarity } : {}),
  });
}

export function describeTensionMerges(found: { tensions: number; decided: number; proposals: MergeProposal[] }): string {
  return [
    `${found.proposals.length} merge proposal${found.proposals.length === 1 ? '' : 's'} among ${found.tensions} tensions (same two voices; topics and claims alike; ${found.decided} pairs decided before). Read both, then: npm run curate -- tension-merge <from> <into> merged|declined --by <curator>`,
    ...found.proposals.map(
      (proposal) =>
        `${proposal.similarity.toFixed(3)}  ${proposal.voices.join(' vs ')}: "${proposal.topics[1]}" → "${proposal.topics[0]}"\n        ${proposal.from}\n     →  ${proposal.into}`,
    ),
  ].join('\n');
}
