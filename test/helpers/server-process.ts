/**
 * A real API server process for tests that kill it or run several: `node --import tsx`
 * (not the tsx CLI, which forks, so the pid we signal is the server itself).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../../core/paths.ts';

export interface ServerProcess {
  child: ChildProcess;
  base: string;
  /** Everything the process printed so far. */
  output: () => string;
}

export async function startServerProcess(env: Record<string, string>, timeoutMs = 30_000): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'api/server.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  for (let waited = 0; waited < timeoutMs; waited += 10) {
    const match = output.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
    if (match) return { child, base: match[1]!, output: () => output };
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start: ${output}`);
}
