/**
 * `npm run new` (issue 28, item 3): skeletons with the next free id, today's date and the
 * required fields, valid as written, never over an existing file or answer, and listed by the
 * change check as new content.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseMarkdown } from '../content-files/frontmatter.ts';
import { loadContent } from '../content-files/load-content.ts';
import { runChangeCheck } from '../scripts/lib/check-change.ts';
import { ScaffoldError, scaffoldAnswer, scaffoldRecord, scaffoldWork } from '../scripts/lib/scaffold.ts';
import { createTestRepo, type TestRepo } from './helpers/git-repo.ts';

const TODAY = '2026-11-26';
let repo: TestRepo;
beforeEach(() => {
  repo = createTestRepo();
  return () => repo.dispose();
});

const VERBATIM = 'Yes, in part.\n  An indented line, kept.  \n\n"Quotes": and a colon.\n';

describe('npm run new', () => {
  it('work: the next free id, today, the required fields, valid and listed as a new work', () => {
    const written = scaffoldWork(repo.content, { title: 'Salt and the harbour', contributors: ['Ana'] }, TODAY);
    expect(written).toEqual({ id: 'TST-5', file: 'works/TST-5.md' });
    const data = parseMarkdown(repo.read('works/TST-5.md')).data;
    expect(data).toEqual({
      id: 'TST-5',
      title: 'Salt and the harbour',
      ring: 'open',
      type: 'essay',
      layer: 'research',
      evidence: 'uncharacterized',
      contributors: ['Ana'],
      date: TODAY,
      lineage: [],
    });
    expect(scaffoldWork(repo.content, { title: 'A reading', contributors: ['Ana'], synthesis: true }, TODAY).id).toBe('TST-S1');
    const outcome = runChangeCheck({ contentDir: repo.content, base: 'main' });
    expect(outcome.code).toBe(0);
    expect(outcome.report!.allowed.map((entry) => entry.group)).toEqual(['new-works', 'new-works']);
  });

  it('record: answers verbatim from files, family and lab from models.yaml, no tier typed', () => {
    const written = scaffoldRecord(
      repo.content,
      {
        question: 'Is a harbour a place or a practice?',
        method: 'Asked verbatim.',
        answers: [
          { modelId: 'alder-2', text: VERBATIM },
          { modelId: 'birch-1', text: 'No.' },
        ],
      },
      TODAY,
    );
    expect(written).toEqual({ id: 'TST-D3', file: 'divergences/TST-D3.md' });
    const record = loadContent(repo.content).divergences.find((entry) => entry.data.id === 'TST-D3')!.data;
    expect(record.answers[0]).toEqual({ model: 'Alder', model_id: 'alder-2', lab: 'Alder Lab (fictional)', date: TODAY, text: VERBATIM });
    expect(record.certification).toEqual({ tier: 'C0' });
    expect(parseMarkdown(repo.read('divergences/TST-D3.md')).data.certification).toBeUndefined();
    const outcome = runChangeCheck({ contentDir: repo.content, base: 'main' });
    expect(outcome.report!.allowed.map((entry) => [entry.group, entry.file])).toEqual([['new-records', 'divergences/TST-D3.md']]);
  });

  it('answer: appended at the end, every earlier byte kept, listed as a new answer', () => {
    const before = repo.read('divergences/TST-D1.md');
    scaffoldAnswer(repo.content, { record: 'TST-D1', modelId: 'alder-2', text: VERBATIM, answered: '2026-11-25T09:00:00Z' }, TODAY);
    const after = repo.read('divergences/TST-D1.md');
    const answersEnd = before.indexOf('tensions:');
    expect(after.slice(0, answersEnd)).toBe(before.slice(0, answersEnd));
    expect(after.slice(after.length - (before.length - answersEnd))).toBe(before.slice(answersEnd));
    const outcome = runChangeCheck({ contentDir: repo.content, base: 'main' });
    expect(outcome.code).toBe(0);
    expect(outcome.report!.allowed.map((entry) => entry.group)).toEqual(['new-answers']);
  });

  it('refuses to overwrite a file, an id or an answer, and writes nothing that would not validate', () => {
    expect(() => scaffoldWork(repo.content, { title: 'Again', contributors: ['Ana'], id: 'TST-2' }, TODAY)).toThrow(
      /works\/TST-2\.md \(TST-2\) already exists/,
    );
    expect(() =>
      scaffoldRecord(
        repo.content,
        {
          question: 'Q?',
          method: 'M.',
          answers: [
            { modelId: 'alder-2', text: 'a' },
            { modelId: 'birch-1', text: 'b' },
          ],
          id: 'TST-D1',
        },
        TODAY,
      ),
    ).toThrow(ScaffoldError);
    expect(() => scaffoldAnswer(repo.content, { record: 'TST-D1', modelId: 'birch-1', text: 'Other words.' }, TODAY)).toThrow(
      /already holds an answer of birch-1/,
    );
    expect(() =>
      scaffoldRecord(
        repo.content,
        {
          question: 'Q?',
          method: 'M.',
          answers: [
            { modelId: 'alder-2', text: 'a' },
            { modelId: 'oak-9', text: 'b' },
          ],
        },
        TODAY,
      ),
    ).toThrow(/"oak-9" is not a model_id in models\.yaml/);
    expect(() => scaffoldWork(repo.content, { title: 'Bad', contributors: ['Ana'], lineage: ['no-such-concept'] }, TODAY)).toThrow(
      /would not validate, nothing was written/,
    );
    const outcome = runChangeCheck({ contentDir: repo.content, base: 'main' });
    expect(outcome.report!.allowed).toEqual([]);
  });

  it('refuses to start from content that does not validate', () => {
    const file = path.join(repo.content, 'works/TST-1.md');
    writeFileSync(file, readFileSync(file, 'utf8').replace('ring: core', 'ring: central'));
    expect(() => scaffoldWork(repo.content, { title: 'T', contributors: ['Ana'] }, TODAY)).toThrow(/not valid before the change/);
  });
});
