/**
 * A throw-away PostgreSQL cluster for tests: initdb into a temporary folder, start it on a
 * free loopback port, stop and remove it afterwards. Uses the Debian package's binaries
 * (.ci/run installs postgresql). As root, the server runs as the `postgres` user.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

function findBin(name: string): string | undefined {
  const which = spawnSync('which', [name], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return which.stdout.trim();
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  for (const version of readdirSync(root).sort().reverse()) {
    const candidate = path.join(root, version, 'bin', name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** CI installs PostgreSQL (.ci/run), so there the suites run or fail; elsewhere they skip without it. */
export const POSTGRES_AVAILABLE = Boolean(findBin('initdb') && findBin('pg_ctl')) || Boolean(process.env.CI);

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

export interface TestPostgres {
  url: string;
  stop(): void;
}

export async function startPostgres(): Promise<TestPostgres> {
  const initdb = findBin('initdb')!;
  const pgCtl = findBin('pg_ctl')!;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'polyphony-pg-'));
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const run = (command: string, args: string[]) => {
    if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { stdio: 'pipe' });
    else execFileSync(command, args, { stdio: 'pipe' });
  };
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
  }
  run(initdb, ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-instructions', '-E', 'UTF8']);
  const port = await freePort();
  run(pgCtl, ['-D', data, '-l', path.join(dir, 'log'), '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`, 'start']);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
