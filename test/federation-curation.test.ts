/**
 * Curating imports: the content schema accepts an origin's id only on a record carrying its
 * federation provenance; approval writes the record and the origin's bytes, validated, and
 * rolls back what would break the build; rejection needs a reason.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../core/manifest.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import type { NewImport } from '../storage/store.ts';
import { createDivergenceSchema } from '../schemas/content.ts';
import { approveImport, rejectImport } from '../scripts/lib/curation-imports.ts';
import { parseMarkdown } from '../content-files/frontmatter.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

const origin = writeFixtureContent({ prefix: 'AAA' });
const originRecord = (id: string) => readFileSync(path.join(origin, 'divergences', `${id}.md`), 'utf8');
const provenance = (id: string, extra: Record<string, unknown> = {}) => ({
  origin: 'http://a.test',
  origin_node: 'pn1:aa',
  origin_name: 'Fixture',
  origin_prefix: 'AAA',
  original_id: id,
  original_url: `http://a.test/records/${id}.md`,
  content_hash: sha256Hex(originRecord(id)),
  key_id: 'aa',
  public_key: 'AAAA',
  signature: 'c2ln',
  licence: 'CC BY-SA 4.0',
  attribution: 'Fixture, CC BY-SA 4.0',
  pulled_at: '2026-01-01T00:00:00.000Z',
  ...extra,
});
const staged = (n: number, id: string): NewImport => ({
  id: `imp_${n}`,
  origin_node: 'pn1:aa',
  origin: 'http://a.test',
  record_id: id,
  content_hash: sha256Hex(originRecord(id)),
  markdown: originRecord(id),
  provenance: provenance(id),
  staged_at: `2026-01-01T00:00:0${n}.000Z`,
});

describe('the content schema and imported ids', () => {
  const schema = createDivergenceSchema('BBB');
  const data = parseMarkdown(originRecord('AAA-D1')).data;
  const messages = (value: unknown) => {
    const result = schema.safeParse(value);
    return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  };

  it('refuses another prefix on a record without federation provenance', () => {
    expect(messages(data)).toEqual(['id: must match BBB-D<digits> or BBB-L<digits>']);
  });
  it("accepts the origin's id on an import carrying that origin prefix", () => {
    expect(messages({ ...data, provenance: { source: 'federation', federation: provenance('AAA-D1') } })).toEqual([]);
  });
  it('refuses an import claiming our own prefix as its origin, or another original id', () => {
    expect(messages({ ...data, id: 'BBB-D7', provenance: { source: 'federation', federation: provenance('AAA-D1', { origin_prefix: 'BBB' }) } })).toEqual([
      'provenance.federation.original_id: must be the record id BBB-D7',
    ]);
    expect(messages({ ...data, provenance: { source: 'federation', federation: provenance('AAA-D1', { origin_prefix: 'BBB' }) } })[0]).toMatch(
      /^id: must match BBB-D<digits> or BBB-L<digits>, or carry the origin prefix BBB$/,
    );
    expect(messages({ ...data, provenance: { source: 'federation', federation: provenance('AAA-D2') } })).toEqual([
      'provenance.federation.original_id: must be the record id AAA-D1',
    ]);
  });
});

describe('approving and rejecting imports', () => {
  it('writes the record with provenance and the origin bytes verbatim, rolls back an approval that breaks the content, and reviews once', async () => {
    const content = writeFixtureContent({ prefix: 'BBB' });
    const store = createSqliteStore(':memory:');
    const peer = { origin: 'http://a.test', node_id: 'pn1:aa', public_key: 'AAAA', last_signed_at: '2026-01-01T00:00:00.000Z' };
    await store.stageImports(peer, [staged(1, 'AAA-D1'), staged(2, 'AAA-D2')]);

    // AAA-D2 re-elicits AAA-D1, not yet approved: the content would be invalid
    await expect(approveImport(store, content, 'imp_2', { by: 'cur' })).rejects.toThrow(/re_elicits: points to "AAA-D1"/);
    expect(existsSync(path.join(content, 'divergences', 'AAA-D2.md'))).toBe(false);
    expect(existsSync(path.join(content, 'federation', 'AAA-D2.md'))).toBe(false);
    expect((await store.getImport('imp_2'))!.status).toBe('pending');

    const now = new Date('2026-02-01T00:00:00.000Z');
    const result = await approveImport(store, content, 'imp_1', { by: 'cur', now });
    expect(result).toMatchObject({
      files: ['divergences/AAA-D1.md', 'federation/AAA-D1.md'],
      addedModels: [],
      import: { status: 'approved', reviewer: 'cur' },
    });
    expect(readFileSync(path.join(content, 'federation', 'AAA-D1.md'), 'utf8')).toBe(originRecord('AAA-D1'));
    const written = parseMarkdown(readFileSync(path.join(content, 'divergences', 'AAA-D1.md'), 'utf8'));
    const original = parseMarkdown(originRecord('AAA-D1'));
    expect(written.body).toBe(original.body);
    expect(written.data.answers).toEqual(original.data.answers);
    expect(written.data.provenance).toEqual({
      source: 'federation: imported from Fixture (http://a.test)',
      federation: { ...provenance('AAA-D1'), approved_at: now.toISOString(), approved_by: 'cur' },
    });
    await expect(approveImport(store, content, 'imp_1', { by: 'cur' })).rejects.toThrow('imp_1 is approved, not pending');
    await approveImport(store, content, 'imp_2', { by: 'cur' });

    await expect(rejectImport(store, 'imp_2', 'cur', 'late')).rejects.toThrow('imp_2 is approved, not pending');
    await expect(rejectImport(store, 'imp_9', 'cur', 'x')).rejects.toThrow('no import imp_9');
    await store.close();
  });

  it('refuses to overwrite a record of ours, and rejects with a reason', async () => {
    const content = writeFixtureContent({ prefix: 'BBB' });
    const store = createSqliteStore(':memory:');
    const peer = { origin: 'http://b-twin.test', node_id: 'pn1:bb', public_key: 'BBBB', last_signed_at: '2026-01-01T00:00:00.000Z' };
    const ours = readFileSync(path.join(content, 'divergences', 'BBB-D1.md'), 'utf8');
    await store.stageImports(peer, [{ ...staged(3, 'AAA-D1'), origin_node: 'pn1:bb', record_id: 'BBB-D1', markdown: ours, content_hash: sha256Hex(ours) }]);
    await expect(approveImport(store, content, 'imp_3', { by: 'cur' })).rejects.toThrow(/already holds a record BBB-D1 that is not an import/);
    expect(readFileSync(path.join(content, 'divergences', 'BBB-D1.md'), 'utf8')).toBe(ours);
    await expect(rejectImport(store, 'imp_3', 'cur', ' ')).rejects.toThrow('a rejection needs a reason');
    expect(await rejectImport(store, 'imp_3', 'cur', 'same prefix as ours')).toMatchObject({ status: 'rejected', reason: 'same prefix as ours' });
    await store.close();
  });
});
