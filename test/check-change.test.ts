/**
 * The change check (issue 28) on real git repositories in a temporary folder: each refusal names
 * file, field and rule; each allowed change is listed in its group; the override; certification
 * written by certify --write passes and the same block typed by hand does not; shallow clones and
 * a detached HEAD; and the validator's verdict is the check's.
 */
import { renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ContentError } from '../content-files/issues.ts';
import { loadContent } from '../content-files/load-content.ts';
import { appendDisposition } from '../content-files/tension-dispositions.ts';
import { runChangeCheck, type ChangeCheckOutcome } from '../scripts/lib/check-change.ts';
import { createTestRepo, git, type TestRepo } from './helpers/git-repo.ts';

let repo: TestRepo;
beforeEach(() => {
  repo = createTestRepo();
  return () => repo.dispose();
});

function check(base = 'main', override?: string, contentDir = repo.content): ChangeCheckOutcome {
  return runChangeCheck({ contentDir, base, override });
}

/** Whatever the check says, the validator says the same about the result's validity. */
function validatorAgrees(outcome: ChangeCheckOutcome, contentDir = repo.content): void {
  let issues: readonly unknown[] = [];
  try {
    loadContent(contentDir);
  } catch (error) {
    if (!(error instanceof ContentError)) throw error;
    issues = error.issues;
  }
  expect(outcome.invalid).toEqual(issues);
}

function refusedWith(outcome: ChangeCheckOutcome, expected: { file: string; field: string; rule: string }[]): void {
  expect(outcome.code).toBe(1);
  expect(outcome.report!.refusals.map(({ file, field, rule }) => ({ file, field, rule }))).toEqual(expected);
  for (const refusal of expected) expect(outcome.text).toContain(`x ${refusal.file}: ${refusal.field}: [${refusal.rule}]`);
  expect(outcome.text).toContain('REFUSED');
  validatorAgrees(outcome);
}

function allowed(outcome: ChangeCheckOutcome): { group: string; file: string }[] {
  expect(outcome.report!.refusals).toEqual([]);
  expect(outcome.code).toBe(0);
  validatorAgrees(outcome);
  return outcome.report!.allowed.map(({ group, file }) => ({ group, file }));
}

const D1 = 'divergences/TST-D1.md';

describe('refusals', () => {
  it('one character of a stored answer, named by file, field and rule', () => {
    repo.edit(D1, (text) => text.replace('installed, not owned.', 'installed, not owned!'));
    const outcome = check();
    refusedWith(outcome, [{ file: D1, field: 'answers.1.text', rule: 'verbatim-answer' }]);
    expect(outcome.text).toMatch(/stored answer of Birch changed: first difference at character 49/);
  });

  it.each([
    ['model_id', (text: string) => text.replace('model_id: alder-1', 'model_id: alder-2')],
    ['date', (text: string) => text.replace('date: 2025-06-01T10:00:00Z', 'date: 2025-06-02T10:00:00Z')],
    ['truncated', (text: string) => text.replace('    model_id: cedar-1\n', '    model_id: cedar-1\n    truncated: true\n')],
  ])("an answer's %s", (field, change) => {
    repo.edit(D1, change);
    const index = field === 'truncated' ? 2 : 0;
    refusedWith(check(), [{ file: D1, field: `answers.${index}.${field}`, rule: 'verbatim-answer' }]);
  });

  it("an answer's model", () => {
    repo.edit(D1, (text) => text.replace('  - model: Cedar', '  - model: cedar'));
    refusedWith(check(), [{ file: D1, field: 'answers.2.model', rule: 'verbatim-answer' }]);
  });

  it('a removed answer', () => {
    repo.edit(D1, (text) => text.replace(/ {2}- model: Cedar\n( {4}.*\n)+/, ''));
    refusedWith(check(), [{ file: D1, field: 'answers.2', rule: 'answer-removed' }]);
  });

  it('a removed record and a removed work', () => {
    rmSync(path.join(repo.content, 'divergences/TST-D2.md'));
    rmSync(path.join(repo.content, 'works/TST-3.md'));
    refusedWith(check(), [
      { file: 'divergences/TST-D2.md', field: '(file)', rule: 'record-removed' },
      { file: 'works/TST-3.md', field: '(file)', rule: 'record-removed' },
    ]);
  });

  it('a record renamed (file and id) is refused as an id change, naming the new id', () => {
    renameSync(path.join(repo.content, 'divergences/TST-D2.md'), path.join(repo.content, 'divergences/TST-D9.md'));
    repo.edit('divergences/TST-D9.md', (text) => text.replace('id: TST-D2', 'id: TST-D9'));
    const outcome = check();
    refusedWith(outcome, [{ file: 'divergences/TST-D2.md', field: 'id', rule: 'id-changed' }]);
    expect(outcome.text).toContain('TST-D2 was renamed to TST-D9');
  });

  it("an id changed in place is refused, and the validator's complaint is shown too", () => {
    repo.edit('works/TST-2.md', (text) => text.replace('id: TST-2', 'id: TST-20'));
    const outcome = check();
    refusedWith(outcome, [{ file: 'works/TST-2.md', field: 'id', rule: 'id-changed' }]);
    expect(outcome.invalid!.length).toBeGreaterThan(0);
    expect(outcome.text).toContain('works/TST-2.md: id: file must be named TST-20.md after its id');
  });

  it('a disposition edited rather than appended', () => {
    appendDisposition(repo.content, 'alder__birch__ownership-of-refusal', { kind: 'held', by: 'ana', at: '2026-02-01T10:00:00Z', reason: 'Both live.' });
    repo.commit('held');
    repo.edit('tensions/alder__birch__ownership-of-refusal.yaml', (text) => text.replace('Both live.', 'Both readings live.'));
    refusedWith(check(), [{ file: 'tensions/alder__birch__ownership-of-refusal.yaml', field: 'dispositions.0', rule: 'append-only' }]);
  });

  it('an annotation edited, and a claim removed', () => {
    repo.edit(D1, (text) => text.replace('note: Check the Cedar reading.', 'note: Check the Cedar reading again.'));
    repo.edit('claims.yaml', (text) => text.replace(/claims:\n[\s\S]*/, 'claims: []\n'));
    const outcome = check();
    expect(outcome.report!.refusals.map((refusal) => [refusal.file, refusal.rule])).toEqual([
      ['claims.yaml', 'append-only'],
      [D1, 'append-only'],
    ]);
    expect(outcome.report!.refusals[1]!.field).toBe('annotations.0');
  });

  it('a tier typed by hand into an existing record and into a new one', () => {
    repo.edit(D1, (text) => text.replace('  tier: C3', '  tier: C2'));
    repo.write(
      'divergences/TST-D7.md',
      repo
        .read('divergences/TST-D2.md')
        .replace('id: TST-D2', 'id: TST-D7')
        .replace(/re_elicits: .*\n/, ''),
    );
    repo.edit('divergences/TST-D7.md', (text) => text.replace('answers:', 'certification:\n  tier: C3\nanswers:'));
    const outcome = check();
    refusedWith(outcome, [
      { file: D1, field: 'certification', rule: 'certification-unearned' },
      { file: 'divergences/TST-D7.md', field: 'certification', rule: 'certification-unearned' },
    ]);
    expect(outcome.text).toContain('no result line with written: true for TST-D1');
  });
});

describe('allowed changes, listed by group', () => {
  it('no change at all', () => {
    const outcome = check();
    expect(allowed(outcome)).toEqual([]);
    expect(outcome.text).toContain('No change to the content.');
  });

  it('a new record, a new answer, an appended annotation and disposition, prose edits and a new work', () => {
    repo.write(
      'divergences/TST-D7.md',
      repo
        .read('divergences/TST-D2.md')
        .replace('id: TST-D2', 'id: TST-D7')
        .replace(/re_elicits: .*\n/, ''),
    );
    repo.edit(D1, (text) =>
      text
        .replace('tensions:', '  - model: Alder\n    model_id: alder-2\n    date: 2026-01-01\n    text: Later words.\ntensions:')
        .replace('method: Asked verbatim, no system prompt.', 'method: Asked verbatim, without a system prompt.'),
    );
    repo.edit('works/TST-1.md', (text) => `${text}\nA further paragraph by its contributor.\n`);
    repo.write('works/TST-5.md', repo.read('works/TST-1.md').replace('id: TST-1', 'id: TST-5'));
    appendDisposition(repo.content, 'alder__birch__ownership-of-refusal', { kind: 'held', by: 'ana', at: '2026-02-01T10:00:00Z', reason: 'Both live.' });
    const outcome = check();
    expect(allowed(outcome)).toEqual([
      { group: 'new-answers', file: D1 },
      { group: 'edits', file: D1 },
      { group: 'new-records', file: 'divergences/TST-D7.md' },
      { group: 'dispositions', file: 'tensions/alder__birch__ownership-of-refusal.yaml' },
      { group: 'edits', file: 'works/TST-1.md' },
      { group: 'new-works', file: 'works/TST-5.md' },
    ]);
    expect(outcome.text).toMatch(/New answers \(1\)\n {2}\+ divergences\/TST-D1\.md: answers\.3: Alder \(alder-2, 2026-01-01\)/);
    expect(outcome.text).toContain('edited: method');
    expect(outcome.text).toContain('OK: every change is allowed.');
  });

  it('taking back a typed tier that no evidence backs', () => {
    repo.edit(D1, (text) => text.replace(/certification:\n( {2}.*\n)+/, ''));
    expect(allowed(check())).toEqual([{ group: 'edits', file: D1 }]);
  });
});

describe('the override', () => {
  it('accepts refused changes only with a reason in words, and says so loudly', () => {
    repo.edit(D1, (text) => text.replace('installed, not owned.', 'installed, not owned!'));
    expect(check('main', 'yes').code).toBe(2);
    const outcome = check('main', 'the contributor withdrew the answer, issue 41');
    expect(outcome.code).toBe(0);
    expect(outcome.text).toContain("!! OVERRIDE: 1 refused change accepted by the curator's typed override");
    expect(outcome.text).toContain('!! Reason given: the contributor withdrew the answer, issue 41');
    expect(outcome.text).toContain('!! Rule set aside: verbatim-answer');
    expect(outcome.text).toContain('x divergences/TST-D1.md: answers.1.text: [verbatim-answer]');
  });

  it('never overrides invalid content', () => {
    repo.edit('works/TST-2.md', (text) => text.replace('ring: curated', 'ring: central'));
    const outcome = check('main', 'the curator accepts this edit knowingly');
    expect(outcome.code).toBe(1);
    validatorAgrees(outcome);
    expect(outcome.text).toContain('works/TST-2.md: ring:');
  });
});

describe('checkouts as CI makes them', () => {
  it('a shallow clone refuses an absent base with how to fetch it, then checks once it is fetched', () => {
    repo.edit(D1, (text) => text.replace('installed, not owned.', 'installed, not owned!'));
    git(repo.root, 'checkout', '-q', '-b', 'pr');
    repo.commit('typo fix');
    const clone = path.join(repo.root, '..', `${path.basename(repo.root)}-clone`);
    git(path.dirname(clone), 'clone', '-q', '--depth=1', '--branch', 'pr', `file://${repo.root}`, clone);
    try {
      const content = path.join(clone, 'content');
      const missing = check('origin/main', undefined, content);
      expect(missing.code).toBe(2);
      expect(missing.text).toContain('a shallow clone: fetch it first');
      git(clone, 'fetch', '-q', '--depth=1', 'origin', 'main:refs/remotes/origin/main');
      const outcome = check('origin/main', undefined, content);
      expect(outcome.report!.refusals.map((refusal) => refusal.field)).toEqual(['answers.1.text']);
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
  });

  it('a detached HEAD checks against the named base', () => {
    git(repo.root, 'checkout', '-q', '-b', 'pr');
    repo.write('works/TST-5.md', repo.read('works/TST-1.md').replace('id: TST-1', 'id: TST-5'));
    const head = repo.commit('new work');
    git(repo.root, 'checkout', '-q', '--detach', head);
    expect(git(repo.root, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('HEAD');
    expect(allowed(check('main'))).toEqual([{ group: 'new-works', file: 'works/TST-5.md' }]);
  });

  it('an unknown base is a usage error, not a pass', () => {
    expect(check('no-such-branch').code).toBe(2);
  });
});
