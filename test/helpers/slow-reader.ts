/**
 * Runs a CLI (a TypeScript script through tsx) with one of its output pipes read slowly: one
 * chunk at a time with a pause after each, so that the pipe stays full while the CLI
 * finishes. A CLI that exits before its output drains loses all but the first pipe buffer
 * (64 KiB). With `stopAfter`, the pipe is closed after that many bytes, as `head -c` does.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO_ROOT } from '../../core/paths.ts';

const TSX = path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface SlowReadOptions {
  env?: NodeJS.ProcessEnv;
  /** The pipe read slowly; the other is read as it comes. Default stdout. */
  slow?: 'stdout' | 'stderr';
  stopAfter?: number;
}

export async function runCliSlowly(script: string, args: readonly string[], options: SlowReadOptions = {}): Promise<CliRun> {
  const child = spawn(process.execPath, [TSX, path.join(REPO_ROOT, script), ...args], { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const slowName = options.slow ?? 'stdout';
  const slow = child[slowName];
  const fast = slowName === 'stdout' ? child.stderr : child.stdout;
  let fastText = '';
  fast.setEncoding('utf8').on('data', (text: string) => (fastText += text));
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of slow as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    bytes += chunk.length;
    if (options.stopAfter !== undefined && bytes >= options.stopAfter) {
      slow.destroy();
      break;
    }
    await sleep(20);
  }
  const slowText = Buffer.concat(chunks).toString('utf8');
  const code = await closed;
  return slowName === 'stdout' ? { code, stdout: slowText, stderr: fastText } : { code, stdout: fastText, stderr: slowText };
}
