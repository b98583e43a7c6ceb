/**
 * Real git repositories in a temporary folder for the change check: the fixture content under
 * `content/`, committed on `main`, with an identity and no system or global git config.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeFixtureContent } from '../../devkit/fixture-content.ts';

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Contributor',
  GIT_AUTHOR_EMAIL: 'contributor@example.test',
  GIT_COMMITTER_NAME: 'Contributor',
  GIT_COMMITTER_EMAIL: 'contributor@example.test',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: os.devNull,
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, stdio: ['ignore', 'pipe', 'pipe'] }).toString('utf8');
}

export interface TestRepo {
  root: string;
  content: string;
  read(file: string): string;
  write(file: string, text: string): void;
  edit(file: string, change: (text: string) => string): void;
  commit(message: string): string;
  dispose(): void;
}

export function createTestRepo(): TestRepo {
  const root = mkdtempSync(path.join(os.tmpdir(), 'polyphony-git-'));
  const fixture = writeFixtureContent();
  const content = path.join(root, 'content');
  cpSync(fixture, content, { recursive: true });
  rmSync(fixture, { recursive: true, force: true });
  git(root, 'init', '-q', '-b', 'main');
  const repo: TestRepo = {
    root,
    content,
    read: (file) => readFileSync(path.join(content, file), 'utf8'),
    write: (file, text) => writeFileSync(path.join(content, file), text),
    edit: (file, change) => repo.write(file, change(repo.read(file))),
    commit: (message) => {
      git(root, 'add', '-A');
      git(root, 'commit', '-q', '--allow-empty', '-m', message);
      return git(root, 'rev-parse', 'HEAD').trim();
    },
    dispose: () => rmSync(root, { recursive: true, force: true }),
  };
  repo.commit('fixture content');
  return repo;
}
