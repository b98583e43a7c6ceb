/**
 * The fast lane, `npm run test:fast`: unit tests and in-process API tests (supertest, the MCP
 * SDK over loopback, the fake OpenAI server) with the deterministic stand-in embedder of
 * devkit/hashed-embedder.ts instead of USE-lite (TEST_EMBEDDER=hashed, read by devkit/app.ts).
 * `npm test` runs vitest.config.ts, the full lane: every file below, excluded ones included,
 * with the real model. A new test file joins the fast lane unless it is listed here.
 */
import { defineConfig, mergeConfig } from 'vitest/config';
import full from './vitest.config.ts';

export default mergeConfig(
  full,
  defineConfig({
    test: {
      env: { TEST_EMBEDDER: 'hashed' },
      // One module graph per worker, not per file: the files share the devkit, the app and zod's
      // schemas, and importing them again for each of ~45 files cost about a third of the lane.
      isolate: false,
      exclude: [
        '**/node_modules/**',
        // Browser tests: drive Chromium over a built site.
        'test/e2e/**',
        // Fuzz suites: thousands of generated requests per operation.
        'test/fuzz/**',
        // Assertions on the real model's rankings and scores (retrieval quality on real data:
        // BEIR ArguAna, the Omnarai gold set, the judged intent set, the Omnarai corpus through
        // the API) or on the real data sets in ../shared (the Omnarai import).
        'test/beir.test.ts',
        'test/quality-claims.test.ts',
        'test/omnarai-gold.test.ts',
        'test/intent-set.test.ts',
        'test/omnarai-api.test.ts',
        'test/import-omnarai.test.ts',
        'test/certify-calibration-omnarai.test.ts',
        'test/tension-merges-omnarai.test.ts',
        // Mocks node:worker_threads to end a thread as a crash would: needs a module graph of its own.
        'test/index-worker-crash.test.ts',
        // The embedder itself and the native kernels: they load USE-lite on purpose.
        'test/embedder-runtime.test.ts',
        'test/native-kernels.test.ts',
        'test/embedding-speed-paths.test.ts',
        // Durability, restarts and scale-out: real server processes (each loads the real model),
        // killed and restarted, and PostgreSQL clusters started for the test.
        'test/durability.test.ts',
        'test/restart.test.ts',
        'test/server-ops.test.ts',
        // Drain on SIGTERM, metrics and logs of real server processes (WORKERS=2 under load).
        'test/drain.test.ts',
        // Backup and restore under a server process's writes; pg_dump / pg_restore on a PostgreSQL cluster.
        'test/backup.test.ts',
        'test/federation.test.ts',
        'test/pg-durability.test.ts',
        'test/scale-out.test.ts',
        'test/live-ceiling-pg.test.ts',
        // The store contract, migrations and job leases run both drivers; their PostgreSQL half
        // starts a cluster. The lazy-pg check spawns processes.
        'test/store-contract.test.ts',
        'test/store-migrations.test.ts',
        'test/job-lease.test.ts',
        'test/lazy-pg.test.ts',
        'test/write-parity.test.ts',
        // Issue 26's reproduction on both drivers: its PostgreSQL half starts a cluster.
        'test/body-preflight-drivers.test.ts',
        // CLIs as child processes (tsx and a script's whole module graph per call; some load the
        // real model: certify with the engine embedder, the MCP stdio bin over built artifacts).
        'test/curate-cli.test.ts',
        'test/dispositions-cli.test.ts',
        // Two child processes (tsx each) appending to one tension history at once.
        'test/dispositions-processes.test.ts',
        'test/certify-cli.test.ts',
        // Issue 46's matrix of scripted worlds, read by the real model (and the CLI as a child process).
        'test/certify-abstention.test.ts',
        'test/mcp-stdio.test.ts',
        'test/curation.test.ts',
        'test/cli-output.test.ts',
        'test/export-records.test.ts',
        // npm run new and npm run check-change as child processes, and the PR workflow's run: steps
        // (npm run validate and check-change through npm) against a shallow clone.
        'test/contributor-cli.test.ts',
        // Static site builds: `astro build` in a child process over built artifacts.
        'test/site.test.ts',
        'test/tension-pages.test.ts',
        'test/tension-merge-pages.test.ts',
        'test/federation-site.test.ts',
        'test/certify-evidence.test.ts',
        'test/record-history-site.test.ts',
      ],
    },
  }),
);
