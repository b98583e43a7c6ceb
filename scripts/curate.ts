/**
 * `npm run curate -- <command>`: the curator's CLI over the store's contributions and federation imports (USAGE
 * below is what `--help` prints). STORE_PATH and CONTENT_DIR choose the store and the content
 * folder. Output is never cut short: the CLI exits only once stdout has drained.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { panelReview } from '../core/live/review.ts';
import { createLedger } from '../core/live/metered-call.ts';
import { createReservingMeter } from '../api/live/spend.ts';
import { deriveDivergence } from '../core/records.ts';
import { createPanel } from '../providers/chat.ts';
import { loadPanelConfig } from '../providers/panel-config.ts';
import { openStore } from '../storage/open-store.ts';
import type { ContributionRecord, ImportStatus, Store } from '../storage/store.ts';
import { exitWhenFlushed, quietOnClosedPipe } from './lib/cli-exit.ts';
import { approveContribution, rejectContribution } from './lib/curation.ts';
import { approveImport, describeImport, rejectImport } from './lib/curation-imports.ts';
import { DEFAULT_LIST_LIMIT, describeContribution, listQuery, pageHeader, pageJson, UsageError, type RecordContext } from './lib/curation-list.ts';
import { describeSightings, listSightings, reviewSighting } from './lib/curate-sightings.ts';
import { decideTensionMerge, describeTensionMerges, listTensionMerges, runTensionCommand } from './lib/curate-tension.ts';
import { loadContent } from '../content-files/load-content.ts';
import { pathsFromEnv, REPO_ROOT } from '../core/paths.ts';

const USAGE = `usage: npm run curate -- <command> [options]

  list [filters] [--limit N|all] [--offset M] [--json]
        contributions with their context and panel votes, oldest first, ${DEFAULT_LIST_LIMIT} a page;
        the first line says which items of how many and the --offset of the next page
        --status pending|approved|rejected|all   (default pending)
        --kind answer|proposal
        --record <id>       answers to one Atlas record
        --client <hash>     items from one client (the hash shown as "client:")
  show <id> [--json]                          one item in full
  approve <id> --by <name> [--note <text>] [--family <name>] [--model-id <id>] [--fictional] [--json]
                                              writes content/ with provenance, validated, editing
                                              only the lines it adds; --fictional adds a family new
                                              to models.yaml as fictional (required when the
                                              content's voices are fictional, e.g. demo: true)
  reject <id> --by <name> --reason <text> [--json]
  review <id> [--json]                        ask the configured panel to vote (PANEL_CONFIG)
  tension <key> <kind> --by <name> [options] [--json]
        records a disposition of a tension (keys: GET /api/tensions), appended to
        content/tensions/<key>.yaml and validated; kinds and their options:
        held --reason <text>                     deliberately left open
        reclassified --earlier-voice <voice> --note <text>
        canon-note --note <text>                 a curator's ruling (repairs the tension)
        crux --moves-a <text> --moves-b <text> | --undecidable
        synthesis-drafted --title <text> --text <text>   also stores a pending proposal
        council-review --url <server>            the server re-asks the panel (INGEST_SECRET)
  tension-merges [--json]
        proposes merging tensions that are one disagreement named in other words (same two
        voices; topics and claims alike), the surviving key first; read both before deciding
  tension-merge <from key> <into key> merged|declined --by <name> [--json]
        records the decision in content/tension-merges.yaml (append-only, validated): merged, the
        old key's sightings and dispositions join the surviving key and ?key=<old> resolves to it
  sightings [--status pending|kept|dismissed|all] [--json]
        tensions named by live deliberations, grouped by tension key, most sighted first
  sighting <id> keep|dismiss --by <name> [--json]
        a kept sighting joins its tension on GET /api/tensions

  imports [--status pending|approved|rejected|superseded|all] [--json]
                                              records pulled from other deployments (npm run federate)
  show-import <imp_id> [--json]               one import with its record, verbatim
  approve-import <imp_id> --by <name> [--fictional] [--json]
                                              writes content/divergences/<origin id>.md with its
                                              provenance and content/federation/<origin id>.md, validated
  reject-import <imp_id> --by <name> --reason <text> [--json]

  --json    one JSON document on stdout: for list {total, offset, limit, count, next_offset,
            items}; for show and reject the contribution; for approve {contribution, files};
            for review {id, votes}; for tension {tension, disposition, file, dispositions, ...}; for imports {count, items}; for show-import and
            reject-import the import; for approve-import {import, files, addedModels}
  --store <file|postgres URL>   default STORE_PATH, else .data/polyphony.db
  --content <dir>               default CONTENT_DIR, else content/
`;

function readArguments(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
      status: { type: 'string' },
      kind: { type: 'string' },
      record: { type: 'string' },
      client: { type: 'string' },
      limit: { type: 'string' },
      offset: { type: 'string' },
      by: { type: 'string' },
      note: { type: 'string' },
      reason: { type: 'string' },
      family: { type: 'string' },
      'model-id': { type: 'string' },
      fictional: { type: 'boolean' },
      'earlier-voice': { type: 'string' },
      'moves-a': { type: 'string' },
      'moves-b': { type: 'string' },
      undecidable: { type: 'boolean' },
      title: { type: 'string' },
      text: { type: 'string' },
      url: { type: 'string' },
      store: { type: 'string', default: process.env.STORE_PATH ?? path.join(REPO_ROOT, '.data', 'polyphony.db') },
      content: { type: 'string', default: pathsFromEnv().contentDir },
    },
  });
}
type Values = ReturnType<typeof readArguments>['values'];

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

function recordContexts(contentDir: string): (id: string | null) => RecordContext | undefined {
  const content = loadContent(contentDir);
  return (id) => {
    const entry = id ? content.divergences.find((candidate) => candidate.data.id === id) : undefined;
    return entry && { id: entry.data.id, question: entry.data.question, voices: entry.data.answers.map((answer) => `${answer.model} (${answer.model_id})`) };
  };
}

async function found(store: Store, id: string | undefined): Promise<ContributionRecord> {
  if (!id) throw new UsageError('name the contribution: <command> <id>');
  const item = await store.getContribution(id);
  if (!item) throw new Error(`no contribution ${id}`);
  return item;
}

async function run(store: Store, command: string, id: string | undefined, values: Values, decision?: string): Promise<void> {
  switch (command) {
    case 'list': {
      const query = listQuery(values);
      const page = await store.findContributions(query);
      if (values.json) return print(pageJson(query, page));
      const context = recordContexts(values.content);
      return print([pageHeader(query, page), ...page.items.map((item) => describeContribution(item, context(item.record_id), false))].join('\n\n'));
    }
    case 'show': {
      const item = await found(store, id);
      return print(values.json ? JSON.stringify(item) : describeContribution(item, recordContexts(values.content)(item.record_id), true));
    }
    case 'approve': {
      if (!id || !values.by) throw new UsageError('approve needs <id> and --by <curator>');
      const result = await approveContribution(store, values.content, id, {
        by: values.by,
        ...(values.note ? { note: values.note } : {}),
        ...(values.family ? { family: values.family } : {}),
        ...(values['model-id'] ? { modelId: values['model-id'] } : {}),
        ...(values.fictional ? { fictional: true } : {}),
      });
      return print(
        values.json ? JSON.stringify(result) : `approved ${id}; wrote ${result.files.join(', ')}. Commit them for review; the next build publishes them.`,
      );
    }
    case 'reject': {
      if (!id || !values.by || !values.reason) throw new UsageError('reject needs <id>, --by <curator> and --reason <text>');
      const rejected = await rejectContribution(store, id, values.by, values.reason);
      return print(values.json ? JSON.stringify(rejected) : `rejected ${id}`);
    }
    case 'review': {
      const item = await found(store, id);
      const config = loadPanelConfig(process.env.PANEL_CONFIG);
      const panel = config ? createPanel(config, process.env).panel : undefined;
      if (!panel) throw new Error('a multi-model review needs PANEL_CONFIG with keys for at least two members');
      const content = loadContent(values.content);
      const entry = item.record_id ? content.divergences.find((candidate) => candidate.data.id === item.record_id) : undefined;
      const record = entry ? deriveDivergence(entry.data, entry.body, content.registry) : undefined;
      const scope = { meter: createReservingMeter(store, panel, () => new Date()), ledger: createLedger() };
      const votes = await panelReview(panel.members, item, record, () => new Date(), scope);
      for (const vote of votes) if (vote.vote) await store.addReview(item.id, { reviewer: vote.reviewer, vote: vote.vote, reason: vote.reason, at: vote.at });
      return print(
        values.json ? JSON.stringify({ id: item.id, votes }) : votes.map((vote) => `${vote.reviewer}: ${vote.vote ?? 'no vote'}: ${vote.reason}`).join('\n'),
      );
    }
    case 'sightings': {
      const groups = await listSightings(store, values.content, values.status ?? 'pending');
      return print(values.json ? JSON.stringify({ count: groups.length, groups }) : describeSightings(groups));
    }
    case 'sighting': {
      const reviewed = await reviewSighting(store, id, decision, values.by);
      return print(values.json ? JSON.stringify(reviewed) : `${reviewed.state} ${reviewed.id} (${reviewed.key})`);
    }
    case 'imports': {
      const status = values.status ?? 'pending';
      if (!['pending', 'approved', 'rejected', 'superseded', 'all'].includes(status))
        throw new UsageError('--status is pending, approved, rejected, superseded or all');
      const items = await store.listImports(status === 'all' ? undefined : (status as ImportStatus));
      if (values.json) return print(JSON.stringify({ count: items.length, items }));
      return print(
        [
          `${items.length} ${status === 'all' ? '' : `${status} `}import${items.length === 1 ? '' : 's'}`,
          ...items.map((item) => describeImport(item, false)),
        ].join('\n\n'),
      );
    }
    case 'show-import': {
      if (!id) throw new UsageError('name the import: show-import <imp_id>');
      const item = await store.getImport(id);
      if (!item) throw new Error(`no import ${id}`);
      return print(values.json ? JSON.stringify(item) : describeImport(item, true));
    }
    case 'approve-import': {
      if (!id || !values.by) throw new UsageError('approve-import needs <imp_id> and --by <curator>');
      const result = await approveImport(store, values.content, id, { by: values.by, ...(values.fictional ? { fictional: true } : {}) });
      const added = result.addedModels.length > 0 ? ` Added to models.yaml: ${result.addedModels.join(', ')}.` : '';
      return print(
        values.json
          ? JSON.stringify(result)
          : `approved ${id} as ${result.import.record_id}; wrote ${result.files.join(', ')}.${added} Commit them for review; the next build publishes them.`,
      );
    }
    case 'reject-import': {
      if (!id || !values.by || !values.reason) throw new UsageError('reject-import needs <imp_id>, --by <curator> and --reason <text>');
      const rejected = await rejectImport(store, id, values.by, values.reason);
      return print(values.json ? JSON.stringify(rejected) : `rejected ${id}`);
    }
    default:
      throw new UsageError(command ? `unknown command ${JSON.stringify(command)}` : 'name a command');
  }
}

async function main(args: string[]): Promise<number> {
  let parsed: ReturnType<typeof readArguments>;
  try {
    parsed = readArguments(args);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, id] = positionals;
  if (values.help || command === 'help') {
    print(USAGE);
    return 0;
  }
  let store: Store | undefined;
  try {
    if (command === 'tension-merges') {
      const found = listTensionMerges(values.content);
      print(
        values.json ? JSON.stringify({ tensions: found.tensions, count: found.proposals.length, proposals: found.proposals }) : describeTensionMerges(found),
      );
      return 0;
    }
    if (command === 'tension-merge') {
      const decided = decideTensionMerge(values.content, id, positionals[2], positionals[3], values.by);
      const last = decided.decisions.at(-1)!;
      print(
        values.json
          ? JSON.stringify(decided)
          : `recorded ${last.decision} ${last.from} → ${last.into} in ${decided.file}. Commit it for review; the next build applies it.`,
      );
      return 0;
    }
    if (command === 'tension') {
      // The store is opened only for a synthesis draft (a pending proposal).
      const result = await runTensionCommand(id, positionals[2], values, () => openStore(values.store));
      const disposition = result.disposition as { kind?: string } | undefined;
      print(
        values.json
          ? JSON.stringify(result)
          : `recorded ${disposition?.kind ?? ''} on ${id} in ${String(result.file)}${result.proposal_id ? `; pending proposal ${String(result.proposal_id)}` : ''}. Commit it for review; the next build publishes it.`,
      );
      return 0;
    }
    // Options are checked before the store is opened (opening a new SQLite path creates it).
    if (command === 'list') listQuery(values);
    store = await openStore(values.store);
    await run(store, command ?? '', id, values, positionals[2]);
    return 0;
  } catch (error) {
    process.stderr.write(error instanceof UsageError ? `${error.message}\n\n${USAGE}` : `${(error as Error).message}\n`);
    return error instanceof UsageError ? 2 : 1;
  } finally {
    await store?.close();
  }
}

quietOnClosedPipe();
const code = await main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n`);
  return 1;
});
await exitWhenFlushed(code);
