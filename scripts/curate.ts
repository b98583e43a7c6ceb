/**
 * `npm run curate -- <command>`: the curator's CLI over the store's pending contributions.
 *   list [--status pending|approved|rejected]   items with their context and panel votes
 *   show <id>                                   one item in full
 *   approve <id> --by <name> [--note <text>] [--family <name>] [--model-id <id>]
 *   reject <id> --by <name> --reason <text>
 *   review <id>                                 ask the configured panel to vote (PANEL_CONFIG)
 * STORE_PATH and CONTENT_DIR choose the store and the content folder.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { panelReview } from '../api/core/live/review.ts';
import { createLedger } from '../api/core/live/metered-call.ts';
import { createReservingMeter } from '../api/live/spend.ts';
import { createPanel } from '../api/providers/chat.ts';
import { loadPanelConfig } from '../api/providers/panel-config.ts';
import { openStore } from '../api/storage/open-store.ts';
import type { ContributionRecord } from '../api/storage/store.ts';
import { deriveDivergence } from '../api/core/records.ts';
import { approveContribution, rejectContribution } from './lib/curation.ts';
import { loadContent } from './lib/load-content.ts';
import { pathsFromEnv, REPO_ROOT } from './lib/paths.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    status: { type: 'string' },
    by: { type: 'string' },
    note: { type: 'string' },
    reason: { type: 'string' },
    family: { type: 'string' },
    'model-id': { type: 'string' },
    store: { type: 'string', default: process.env.STORE_PATH ?? path.join(REPO_ROOT, '.data', 'polyphony.db') },
    content: { type: 'string', default: pathsFromEnv().contentDir },
  },
});

const [command, id] = positionals;
const store = await openStore(values.store);
const content = loadContent(values.content);

function describe(item: ContributionRecord, full: boolean): string {
  const record = item.record_id ? content.divergences.find((entry) => entry.data.id === item.record_id) : undefined;
  const text = item.kind === 'answer' ? String(item.payload.answer) : `${String(item.payload.title)}\n${String(item.payload.text)}`;
  const lines = [
    `${item.id}  ${item.kind}  ${item.status}  ${item.created_at}`,
    `  identity: ${item.identity}${item.justification ? `   justification: ${item.justification}` : ''}`,
    ...(record ? [`  record: ${record.data.id}: ${record.data.question}`, `  voices already there: ${record.data.answers.map((answer) => `${answer.model} (${answer.model_id})`).join(', ')}`] : []),
    ...(item.kind === 'proposal' ? [`  sources: ${((item.payload.sources as string[]) ?? []).join(', ') || '(none)'}   evidence: ${String(item.payload.evidence)}`] : []),
    `  text: ${full ? `\n${text}` : `${text.slice(0, 200).replace(/\s+/g, ' ')}${text.length > 200 ? '…' : ''}`}`,
    ...item.reviews.map((review) => `  vote by ${review.reviewer}: ${review.vote ?? 'none'}: ${review.reason}`),
    ...(item.reason && item.status !== 'pending' ? [`  ${item.status} by ${item.reviewer}: ${item.reason}`] : []),
  ];
  return lines.join('\n');
}

async function main(): Promise<number> {
  switch (command) {
    case 'list': {
      const status = (values.status ?? 'pending') as ContributionRecord['status'];
      const items = await store.listContributions(status);
      console.log(items.length === 0 ? `no ${status} contributions` : items.map((item) => describe(item, false)).join('\n\n'));
      return 0;
    }
    case 'show': {
      const item = id ? await store.getContribution(id) : undefined;
      if (!item) throw new Error(`no contribution ${id ?? '(missing id)'}`);
      console.log(describe(item, true));
      return 0;
    }
    case 'approve': {
      if (!id || !values.by) throw new Error('usage: approve <id> --by <curator> [--note <text>] [--family <name>] [--model-id <id>]');
      const result = await approveContribution(store, values.content, id, {
        by: values.by,
        ...(values.note ? { note: values.note } : {}),
        ...(values.family ? { family: values.family } : {}),
        ...(values['model-id'] ? { modelId: values['model-id'] } : {}),
      });
      console.log(`approved ${id}; wrote ${result.files.join(', ')}. Commit them for review; the next build publishes them.`);
      return 0;
    }
    case 'reject': {
      if (!id || !values.by || !values.reason) throw new Error('usage: reject <id> --by <curator> --reason <text>');
      await rejectContribution(store, id, values.by, values.reason);
      console.log(`rejected ${id}`);
      return 0;
    }
    case 'review': {
      const item = id ? await store.getContribution(id) : undefined;
      if (!item) throw new Error(`no contribution ${id ?? '(missing id)'}`);
      const config = loadPanelConfig(process.env.PANEL_CONFIG);
      const panel = config ? createPanel(config, process.env).panel : undefined;
      if (!panel) throw new Error('a multi-model review needs PANEL_CONFIG with keys for at least two members');
      const entry = item.record_id ? content.divergences.find((candidate) => candidate.data.id === item.record_id) : undefined;
      const record = entry ? deriveDivergence(entry.data, entry.body, content.registry) : undefined;
      const scope = { meter: createReservingMeter(store, panel, () => new Date()), ledger: createLedger() };
      for (const vote of await panelReview(panel.members, item, record, () => new Date(), scope)) {
        if (vote.vote) await store.addReview(item.id, { reviewer: vote.reviewer, vote: vote.vote, reason: vote.reason, at: vote.at });
        console.log(`${vote.reviewer}: ${vote.vote ?? 'no vote'}: ${vote.reason}`);
      }
      return 0;
    }
    default:
      console.error('usage: npm run curate -- list|show|approve|reject|review ... (see scripts/curate.ts)');
      return 2;
  }
}

main()
  .then(async (code) => {
    await store.close();
    process.exit(code);
  })
  .catch(async (error: unknown) => {
    console.error((error as Error).message);
    await store.close();
    process.exit(1);
  });
