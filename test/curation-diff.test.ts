/**
 * Curator edits are minimal diffs (issue 17, item 6). Each write a curator triggers — approving
 * an answer, a proposal or an import, recording a disposition — is run on a copy of content and
 * the files are compared line by line before and after: the only change is the lines the write
 * means to add, and no other line or file moves. The demo content is the case the issue found
 * (header comments in models.yaml, quoted dates, whitespace-only lines inside verbatim answers).
 * Fictional content stays fictional: an unknown declared family is refused, or added fictional.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../core/manifest.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import type { Store } from '../storage/store.ts';
import { approveContribution } from '../scripts/lib/curation.ts';
import { approveImport } from '../scripts/lib/curation-imports.ts';
import { parseMarkdown } from '../content-files/frontmatter.ts';
import { loadContent } from '../content-files/load-content.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { appendDisposition } from '../content-files/tension-dispositions.ts';
import { tempDir } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { changedFiles, lineDiff, snapshot } from './helpers/line-diff.ts';

const NOW = new Date('2026-03-04T05:06:07.000Z');
const SUBMITTED = new Date('2026-03-01T00:00:00.000Z');

function demoCopy(): string {
  const dir = path.join(tempDir('curation-diff'), 'content');
  cpSync(path.join(REPO_ROOT, 'content'), dir, { recursive: true });
  return dir;
}

async function storeWith(
  items: { id: string; kind: 'answer' | 'proposal'; record_id?: string; identity: string; payload: Record<string, unknown> }[],
): Promise<Store> {
  const store = createSqliteStore(':memory:');
  for (const item of items) {
    await store.submitContribution(
      {
        id: item.id,
        kind: item.kind,
        record_id: item.record_id ?? null,
        identity: item.identity,
        justification: item.kind === 'answer' ? 'missing_voice' : null,
        payload: item.payload,
        content_hash: sha256Hex(item.id),
        idempotency_key: null,
        client: 'c0ffee',
      },
      { key: 'contribute:test', limit: 100, windowMs: 3_600_000 },
      SUBMITTED,
    );
  }
  return store;
}

const read = (dir: string, file: string) => readFileSync(path.join(dir, file), 'utf8');

/** Index of the first top-level line after `key:` in a frontmatter, where an appended item goes. */
function endOfList(text: string, key: string): number {
  const rows = text.split('\n');
  const start = rows.indexOf(`${key}:`);
  return rows.findIndex((row, index) => index > start && /^[^\s#-]/.test(row));
}

describe('approving an answer edits only the lines it adds', () => {
  it('appends the answer with its provenance to the demo record, and leaves models.yaml and every other file alone', async () => {
    const content = demoCopy();
    const record = 'PLY-D1001';
    const file = `divergences/${record}.md`;
    const store = await storeWith([
      {
        id: 'ctb_1',
        kind: 'answer',
        record_id: record,
        identity: 'kestrel-3',
        payload: { answer: 'Resemblance is not persistence.\n\nBut it is evidence of it.' },
      },
    ]);
    const before = snapshot(content);

    const result = await approveContribution(store, content, 'ctb_1', { by: 'curator-ana', now: NOW });

    expect(result.files).toEqual([file]);
    expect(changedFiles(before, snapshot(content))).toEqual([file]);
    const diff = lineDiff(before.get(file)!, read(content, file));
    expect(diff.removed).toEqual([]);
    expect(diff.hunks).toEqual([
      {
        at: endOfList(before.get(file)!, 'answers'),
        added: [
          '  - model: Kestrel',
          '    model_id: kestrel-3',
          `    date: "${SUBMITTED.toISOString()}"`,
          '    text: |-',
          '      Resemblance is not persistence.',
          '',
          '      But it is evidence of it.',
          '    contributed:',
          '      identity: kestrel-3',
          '      justification: missing_voice',
          `      approved_at: ${NOW.toISOString()}`,
          '      approved_by: curator-ana',
        ],
      },
    ]);
    const written = loadContent(content).divergences.find((entry) => entry.data.id === record)!;
    expect(written.data.answers.at(-1)).toMatchObject({
      text: 'Resemblance is not persistence.\n\nBut it is evidence of it.',
      contributed: { approved_by: 'curator-ana' },
    });
    expect((await store.getContribution('ctb_1'))!.status).toBe('approved');
    await store.close();
  });

  it('refuses to add an unknown declared family to fictional content, and with --fictional appends it marked fictional, header comments kept', async () => {
    const content = demoCopy();
    const store = await storeWith([
      { id: 'ctb_2', kind: 'answer', record_id: 'PLY-D1001', identity: 'dogwood-2', payload: { answer: 'Ownership is a practice.' } },
    ]);
    const before = snapshot(content);

    await expect(approveContribution(store, content, 'ctb_2', { by: 'curator-ana', family: 'Dogwood', now: NOW })).rejects.toThrow(
      /declares its model voices fictional \(site\.yaml says demo: true\), and "Dogwood" is not a family of its models\.yaml.*nothing was written.*--family <name> \(its families: Kestrel, .*\), or pass --fictional/,
    );
    expect(changedFiles(before, snapshot(content))).toEqual([]);
    expect((await store.getContribution('ctb_2'))!.status).toBe('pending');

    const result = await approveContribution(store, content, 'ctb_2', { by: 'curator-ana', family: 'Dogwood', fictional: true, now: NOW });
    expect(result.files).toEqual(['models.yaml', 'divergences/PLY-D1001.md']);
    expect(changedFiles(before, snapshot(content))).toEqual(['divergences/PLY-D1001.md', 'models.yaml']);
    const registryBefore = before.get('models.yaml')!;
    const registryAfter = read(content, 'models.yaml');
    expect(registryAfter.split('\n').slice(0, 3)).toEqual(registryBefore.split('\n').slice(0, 3));
    expect(registryAfter).toMatch(/^# Model registry for the demonstration content\. Every family and lab here is FICTIONAL\.\n/);
    const diff = lineDiff(registryBefore, registryAfter);
    expect(diff.removed).toEqual([]);
    const rows = registryBefore.split('\n');
    expect(diff.hunks).toEqual([
      {
        at: rows.indexOf('models:') - 1,
        added: ['  - name: Dogwood', '    lab: declared by the contributor (fictional)', '    aliases: []', '    fictional: true'],
      },
      { at: rows.length - 1, added: ['  - model_id: dogwood-2', '    family: Dogwood', '    retired: false'] },
    ]);
    const record = lineDiff(before.get('divergences/PLY-D1001.md')!, read(content, 'divergences/PLY-D1001.md'));
    expect(record.removed).toEqual([]);
    expect(record.hunks.map((hunk) => hunk.added[0])).toEqual(['  - model: Dogwood']);
    expect(loadContent(content).registry.families.every((family) => family.fictional)).toBe(true);
    await store.close();
  });

  it('reads fictional content from models.yaml too; in content that is not fictional, adds an unknown family as declared, not fictional', async () => {
    const content = writeFixtureContent();
    writeFileSync(path.join(content, 'site.yaml'), read(content, 'site.yaml').replace('demo: true', 'demo: false'));
    const store = await storeWith([
      { id: 'ctb_3', kind: 'answer', record_id: 'TST-D1', identity: 'dogwood-2', payload: { answer: 'Ownership is a practice.' } },
    ]);
    await expect(approveContribution(store, content, 'ctb_3', { by: 'curator-ana', family: 'Dogwood', now: NOW })).rejects.toThrow(
      /\(models\.yaml marks every family fictional: true\)/,
    );
    writeFileSync(path.join(content, 'models.yaml'), read(content, 'models.yaml').replace('    fictional: true\n', '    fictional: false\n'));
    await approveContribution(store, content, 'ctb_3', { by: 'curator-ana', family: 'Dogwood', now: NOW });
    expect(loadContent(content).registry.families.find((family) => family.name === 'Dogwood')).toEqual({
      name: 'Dogwood',
      lab: 'declared by the contributor',
      aliases: [],
      fictional: false,
    });
    await store.close();
  });
});

describe('the other curator writes change only their own lines', () => {
  it('approving a proposal adds one new file and touches nothing else', async () => {
    const content = writeFixtureContent();
    const store = await storeWith([
      {
        id: 'ctb_4',
        kind: 'proposal',
        identity: 'cedar-1',
        payload: { title: 'Ownership as practice', text: 'Reading TST-D1 and TST-4 together.', sources: ['TST-D1', 'TST-4'] },
      },
    ]);
    const before = snapshot(content);
    const result = await approveContribution(store, content, 'ctb_4', { by: 'curator-ana', now: NOW });
    expect(result.files).toEqual(['proposals/TST-S1.md']);
    expect(changedFiles(before, snapshot(content))).toEqual(['proposals/TST-S1.md']);
    expect(parseMarkdown(read(content, 'proposals/TST-S1.md')).data.provenance).toMatchObject({ identity: 'cedar-1', approved_by: 'curator-ana' });
    await store.close();
  });

  it('a disposition is appended to a hand-written tension file, its comments and quoting kept', async () => {
    const content = demoCopy();
    const file = 'tensions/kestrel__orrery__where-beliefs-are-located.yaml';
    const handWritten = `# Curator notes on where beliefs are located.\n${read(content, file).replace('at: 2025-03-01T09:00:00Z', 'at: "2025-03-01T09:00:00Z"  # first look')}`;
    writeFileSync(path.join(content, file), handWritten);
    const before = snapshot(content);
    const disposition = { kind: 'held' as const, by: 'curator-ana', at: NOW.toISOString(), reason: 'Both readings stay live until someone measures it.' };
    appendDisposition(content, 'kestrel__orrery__where-beliefs-are-located', disposition);
    expect(changedFiles(before, snapshot(content))).toEqual([file]);
    const diff = lineDiff(handWritten, read(content, file));
    expect(diff.removed).toEqual([]);
    expect(diff.hunks).toEqual([
      {
        at: handWritten.split('\n').length - 1,
        added: ['  - kind: held', '    by: curator-ana', `    at: "${NOW.toISOString()}"`, '    reason: Both readings stay live until someone measures it.'],
      },
    ]);
  });

  it("approving an import writes the origin's bytes with only the provenance added, and refuses unknown families in fictional content", async () => {
    const origin = writeFixtureContent({ prefix: 'AAA' });
    const markdown = read(origin, 'divergences/AAA-D1.md').replaceAll('model: Cedar', 'model: Elm').replaceAll('model_id: cedar-1', 'model_id: elm-1');
    const content = writeFixtureContent({ prefix: 'BBB' });
    const store = createSqliteStore(':memory:');
    const hash = sha256Hex(markdown);
    const provenance = {
      origin: 'http://a.test',
      origin_node: 'pn1:aa',
      origin_name: 'Fixture',
      origin_prefix: 'AAA',
      original_id: 'AAA-D1',
      original_url: 'http://a.test/records/AAA-D1.md',
      content_hash: hash,
      key_id: 'aa',
      public_key: 'AAAA',
      signature: 'c2ln',
      licence: 'CC BY-SA 4.0',
      attribution: 'Fixture, CC BY-SA 4.0',
      pulled_at: '2026-01-01T00:00:00.000Z',
    };
    await store.stageImports({ origin: 'http://a.test', node_id: 'pn1:aa', public_key: 'AAAA', last_signed_at: '2026-01-01T00:00:00.000Z' }, [
      {
        id: 'imp_1',
        origin_node: 'pn1:aa',
        origin: 'http://a.test',
        record_id: 'AAA-D1',
        content_hash: hash,
        markdown,
        provenance,
        staged_at: '2026-01-01T00:00:01.000Z',
      },
    ]);
    const before = snapshot(content);
    await expect(approveImport(store, content, 'imp_1', { by: 'cur', now: NOW })).rejects.toThrow(
      /"Elm" is not a family of its models\.yaml.*Reject the import.*--fictional/,
    );
    expect(changedFiles(before, snapshot(content))).toEqual([]);

    const result = await approveImport(store, content, 'imp_1', { by: 'cur', now: NOW, fictional: true });
    expect(result.addedModels).toEqual(['elm-1']);
    expect(changedFiles(before, snapshot(content))).toEqual(['divergences/AAA-D1.md', 'federation/AAA-D1.md', 'models.yaml']);
    const record = lineDiff(markdown, read(content, 'divergences/AAA-D1.md'));
    expect(record.removed).toEqual([]);
    expect(record.hunks).toHaveLength(1);
    expect(record.hunks[0]!.at).toBe(markdown.split('\n').indexOf('---', 1));
    expect(record.hunks[0]!.added.slice(0, 2)).toEqual(['provenance:', '  source: "federation: imported from Fixture (http://a.test)"']);
    const registry = lineDiff(before.get('models.yaml')!, read(content, 'models.yaml'));
    expect(registry.removed).toEqual([]);
    expect(registry.hunks.map((hunk) => hunk.added)).toEqual([
      ['  - name: Elm', '    lab: as named by http://a.test', '    aliases: []', '    fictional: true'],
      ['  - model_id: elm-1', '    family: Elm', '    retired: false'],
    ]);
    await store.close();
  });
});
