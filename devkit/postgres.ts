/**
 * A throw-away PostgreSQL cluster for tests: initdb into a temporary folder, start it on a
 * free loopback port, stop and remove it afterwards; crash it with SIGKILL and start it
 * again on the same data directory and port. Uses the Debian package's binaries
 * (.ci/run installs postgresql). As root, the server runs as the `postgres` user.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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
  /**
   * kill -9 of the postmaster, as a crash would; with `everything`, also of every process it
   * started (backends mid-transaction, WAL writer, checkpointer). Resolves once none of them
   * runs any more, so that `restart` can take over the data directory.
   */
  crash(options?: { everything?: boolean }): Promise<void>;
  /**
   * Starts the server again on the same data directory and port, without blocking the event
   * loop (clients keep running meanwhile); resolves once it accepts connections, after
   * PostgreSQL has replayed its WAL.
   */
  restart(): Promise<void>;
}

/** Whether a process runs (a zombie waiting for its parent to reap it does not). */
function running(pid: number): boolean {
  const ps = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' });
  const state = ps.stdout.trim();
  return ps.status === 0 && state !== '' && !state.startsWith('Z');
}

function childrenOf(pid: number): number[] {
  const pgrep = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' });
  return pgrep.stdout
    .split('\n')
    .filter((line) => /^\d+$/.test(line.trim()))
    .map(Number);
}

export async function startPostgres(): Promise<TestPostgres> {
  const initdb = findBin('initdb');
  const pgCtl = findBin('pg_ctl');
  // Under CI=true the suites count on PostgreSQL (POSTGRES_AVAILABLE): without it they fail here.
  if (!initdb || !pgCtl) throw new Error("PostgreSQL binaries (initdb, pg_ctl) not found: install Debian's postgresql package");
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
  const startArgs = ['-D', data, '-l', path.join(dir, 'log'), '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`, 'start'];
  run(pgCtl, startArgs);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // Already down (crashed and not restarted): nothing to stop.
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    async crash(options = {}) {
      const postmaster = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      // Frozen first, so that no backend it forks escapes the list of processes to wait for.
      process.kill(postmaster, 'SIGSTOP');
      const children = childrenOf(postmaster);
      process.kill(postmaster, 'SIGKILL');
      if (options.everything) {
        for (const child of children) {
          try {
            process.kill(child, 'SIGKILL');
          } catch {
            // Already gone.
          }
        }
      }
      // Orphaned backends notice the postmaster's death at their next wait and exit; a new
      // postmaster refuses to start while any of them still holds the shared memory.
      for (let waited = 0; [postmaster, ...children].some(running); waited += 20) {
        if (waited > 60_000) throw new Error(`PostgreSQL processes still running 60 s after kill -9 of ${postmaster}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // Where nothing reaps orphans, the dead postmaster stays a zombie whose pid still
      // answers kill(pid, 0): its lock files would look live, so remove them as stale.
      rmSync(path.join(data, 'postmaster.pid'), { force: true });
      rmSync(path.join(dir, `.s.PGSQL.${port}.lock`), { force: true });
    },
    restart() {
      const [command, args] = asRoot ? ['runuser', ['-u', 'postgres', '--', pgCtl, ...startArgs]] : [pgCtl, startArgs];
      return new Promise((resolve, reject) => {
        execFile(command, args, (error, _stdout, stderr) => (error ? reject(new Error(`pg_ctl start failed: ${stderr || error.message}`)) : resolve()));
      });
    },
  };
}
