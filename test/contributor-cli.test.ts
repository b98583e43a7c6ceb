/**
 * The contributor's and curator's commands as child processes (issue 28, items 1-3): `npm run
 * new`, `npm run check-change` with its exit codes, and the `run:` steps of
 * .github/workflows/content.yml against a shallow, detached clone of a pull request.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeEach, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { REPO_ROOT } from '../core/paths.ts';
import { createTestRepo, git, type TestRepo } from './helpers/git-repo.ts';

const run = promisify(execFile);

async function cli(script: string, args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(REPO_ROOT, 'scripts', script), ...args],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, ...env },
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

let repo: TestRepo;
beforeEach(() => {
  repo = createTestRepo();
  return () => repo.dispose();
});

describe('npm run new and npm run check-change', () => {
  it('a contributor scaffolds a record, the check lists it; a typed tier is refused by name', async () => {
    const answers = path.join(repo.root, 'answers');
    mkdirSync(answers);
    writeFileSync(path.join(answers, 'alder.txt'), 'Yes.\n');
    writeFileSync(path.join(answers, 'birch.txt'), 'No, not in general.\n');
    const env = { CONTENT_DIR: repo.content };
    const made = await cli(
      'new.ts',
      [
        'record',
        '--question',
        'Is the tide a clock?',
        '--method',
        'Asked verbatim.',
        '--answer',
        `alder-2=${answers}/alder.txt`,
        '--answer',
        `birch-1=${answers}/birch.txt`,
      ],
      env,
    );
    expect(made).toMatchObject({ code: 0 });
    expect(made.stdout).toContain('wrote divergences/TST-D3.md (TST-D3); content is valid.');
    const again = await cli(
      'new.ts',
      [
        'record',
        '--id',
        'TST-D3',
        '--question',
        'Q?',
        '--method',
        'M.',
        '--answer',
        `alder-2=${answers}/alder.txt`,
        '--answer',
        `birch-1=${answers}/birch.txt`,
      ],
      env,
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('divergences/TST-D3.md (TST-D3) already exists; nothing was written');
    expect((await cli('new.ts', ['poem'], env)).code).toBe(2);

    const listed = await cli('check-change.ts', ['--base', 'main', '--content', repo.content]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/New records \(1\)\n {2}\+ divergences\/TST-D3\.md: TST-D3: "Is the tide a clock\?" \(2 answers\)/);

    repo.edit('divergences/TST-D3.md', (text) => text.replace('answers:', 'certification:\n  tier: C3\nanswers:'));
    const refused = await cli('check-change.ts', ['--base', 'main', '--content', repo.content]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('x divergences/TST-D3.md: certification: [certification-unearned]');
    const overridden = await cli('check-change.ts', ['--base', 'main', '--content', repo.content, '--override', 'demo tier kept on purpose for the talk']);
    expect(overridden.code).toBe(0);
    expect(overridden.stdout).toContain('!! OVERRIDE: 1 refused change accepted');
    expect((await cli('check-change.ts', ['--content', repo.content])).code).toBe(2);
  });
});

describe('.github/workflows/content.yml', () => {
  const workflow = YAML.parse(readFileSync(path.join(REPO_ROOT, '.github/workflows/content.yml'), 'utf8')) as {
    jobs: { content: { steps: { name?: string; run?: string; uses?: string; env?: Record<string, string> }[] } };
  };
  const steps = workflow.jobs.content.steps;

  it('installs, validates and checks the change against the fetched base', () => {
    expect(steps.map((step) => step.run?.split('\n')[0] ?? step.uses)).toEqual([
      'actions/checkout@v4',
      'actions/setup-node@v4',
      'npm ci',
      'git fetch --no-tags --depth=1 origin "+$BASE:refs/check/base"',
      'npm run validate',
      'set -o pipefail',
      expect.stringContaining('if [ -f check-change.txt ]'),
    ]);
  });

  /** The steps after the install, run as the host runs them, in a clone made as the host makes it. */
  async function runSteps(clone: string, env: Record<string, string>) {
    const summary = path.join(clone, 'summary.md');
    const outputs: { code: number; output: string }[] = [];
    for (const step of steps.slice(3)) {
      // `npm run` here means this repository's scripts, over the clone's content.
      const script = step.run!.replaceAll('npm run', `npm --prefix "${REPO_ROOT}" run`);
      try {
        const { stdout, stderr } = await run('bash', ['-e', '-c', script], {
          cwd: clone,
          env: { ...process.env, ...env, CONTENT_DIR: path.join(clone, 'content'), GITHUB_STEP_SUMMARY: summary },
        });
        outputs.push({ code: 0, output: stdout + stderr });
      } catch (error) {
        const failure = error as { code: number; stdout: string; stderr: string };
        outputs.push({ code: failure.code, output: failure.stdout + failure.stderr });
      }
    }
    return { outputs, summary: readFileSync(summary, 'utf8') };
  }

  it('its commands pass a pull request that adds a work and fail one that edits an answer, on a shallow detached clone', async () => {
    const base = git(repo.root, 'rev-parse', 'HEAD').trim();
    git(repo.root, 'checkout', '-q', '-b', 'pr');
    repo.write('works/TST-5.md', repo.read('works/TST-1.md').replace('id: TST-1', 'id: TST-5'));
    const good = repo.commit('a new work');
    repo.edit('divergences/TST-D1.md', (text) => text.replace('installed, not owned.', 'installed, not owned!'));
    const bad = repo.commit('a typo fixed in an answer');
    const clone = `${repo.root}-clone`;
    try {
      for (const [commit, expected] of [
        [good, 0],
        [bad, 1],
      ] as const) {
        rmSync(clone, { recursive: true, force: true });
        git(repo.root, 'clone', '-q', '--no-checkout', '--depth=1', '--branch', 'pr', `file://${repo.root}`, clone);
        git(clone, 'fetch', '-q', '--depth=1', 'origin', commit);
        git(clone, 'checkout', '-q', '--detach', commit);
        const { outputs, summary } = await runSteps(clone, { BASE: base, OVERRIDE: '' });
        expect(outputs.map((output) => output.code)).toEqual([0, 0, expected, 0]);
        expect(summary).toContain(expected === 0 ? '+ works/TST-5.md' : 'x divergences/TST-D1.md: answers.1.text: [verbatim-answer]');
      }
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
  });
});
