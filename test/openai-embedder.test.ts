/**
 * The OpenAI-compatible embedder (providers/openai-embedder.ts) and EMBEDDINGS_CONFIG
 * (providers/embeddings-config.ts) against the local fake server, never a real provider:
 * batching, `dimensions`, retries, the deadline, a wrong vector length, the spend ceiling,
 * configuration errors, and builds keyed to the model (a model change re-embeds everything,
 * the server refuses another model's artifacts, the CLI stops at the ceiling with its own code).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeEmbedding, startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { tempDir } from '../devkit/app.ts';
import { startServerProcess } from './helpers/server-process.ts';
import { artifactPaths } from '../core/artifacts.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { ProviderError } from '../core/ports/chat.ts';
import { ArtifactsEmbedderMismatchError, loadCorpus } from '../api/load-artifacts.ts';
import { buildArtifacts, EXIT_EMBEDDING_CEILING, planLine } from '../scripts/build.ts';
import {
  createConfiguredEmbedder,
  EmbeddingsConfigError,
  EmbeddingsConfigSchema,
  loadEmbeddingsConfig,
  parseEmbeddingsConfig,
} from '../providers/embeddings-config.ts';
import { createOpenAIEmbedder, EmbeddingCeilingError, EmbeddingDimensionError, maxInputTokens, type OpenAIEmbedder } from '../providers/openai-embedder.ts';

let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.reset();
});

function embedderFor(settings: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Promise<OpenAIEmbedder> {
  const config = EmbeddingsConfigSchema.parse({ base_url: fake.baseURL, model: 'embed-test', ...settings });
  return createOpenAIEmbedder({ config, env, source: 'test.yaml' });
}

function inputsOf(model: string): unknown[] {
  return fake.requestsFor(model).map((request) => (request.body as { input: unknown }).input);
}

/** Waits for a condition the server reaches on its own (an event, not a duration). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('OpenAI-compatible embedder', () => {
  it('sends texts in batches of batch_size and returns one normalised vector per text, in order', async () => {
    const embedder = await embedderFor({ dimensions: 8, batch_size: 3, concurrency: 2 });
    const texts = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta'];
    const vectors = await embedder.embed(texts);
    expect(inputsOf('embed-test')).toEqual([['alpha', 'beta', 'gamma'], ['delta', 'epsilon', 'zeta'], ['eta']]);
    expect(vectors).toHaveLength(texts.length);
    vectors.forEach((vector, index) => {
      const expected = fakeEmbedding(texts[index]!, 8);
      expect(vector).toHaveLength(8);
      expected.forEach((value, at) => expect(vector[at]).toBeCloseTo(value, 6));
      expect(Math.hypot(...vector)).toBeCloseTo(1, 6);
    });
  });

  it('sends dimensions when configured, and the id names the model and the dimensions', async () => {
    const embedder = await embedderFor({ dimensions: 16 });
    expect(fake.requests).toHaveLength(0); // configured dimensions: no request to learn them
    const [vector] = await embedder.embed(['one text']);
    expect(vector).toHaveLength(16);
    expect(embedder.dims).toBe(16);
    expect(embedder.id).toBe('openai-compatible:embed-test@16');
    expect(fake.requests.map((request) => (request.body as { dimensions?: number }).dimensions)).toEqual([16]);
  });

  it('without dimensions, sends none and learns the length from one request at start', async () => {
    const embedder = await embedderFor({});
    expect(embedder.dims).toBe(8); // the fake's own length
    expect(embedder.id).toBe('openai-compatible:embed-test@8');
    await embedder.embed(['x']);
    expect(fake.requests).toHaveLength(2);
    for (const request of fake.requests) expect(request.body).not.toHaveProperty('dimensions');
    expect(embedder.spend.requests).toBe(2);
  });

  it('sends the key named by api_key_env', async () => {
    const embedder = await embedderFor({ dimensions: 8, api_key_env: 'EMBED_TEST_KEY' }, { EMBED_TEST_KEY: 'sk-test-123' });
    await embedder.embed(['x']);
    expect(fake.requests[0]?.headers.authorization).toBe('Bearer sk-test-123');
  });

  it('retries a burst of 429 and 503 answers, honouring Retry-After, and counts only the answered request', async () => {
    fake.script('embed-test', [
      { kind: 'status', status: 429, retryAfter: 0.01 },
      { kind: 'status', status: 429, retryAfterMs: 5 },
      { kind: 'status', status: 503, retryAfterMs: 5 },
    ]);
    const embedder = await embedderFor({ dimensions: 8, max_retries: 3, price_per_million_tokens: 1 });
    const [vector] = await embedder.embed(['retried text']);
    expect(vector).toHaveLength(8);
    expect(fake.requests.map((request) => request.behaviour)).toEqual(['status', 'status', 'status', 'default-echo']);
    expect(embedder.spend.requests).toBe(1);
    expect(embedder.spend.tokens).toBe(Math.ceil('retried text'.length / 4));
  });

  it('gives up after max_retries with the failure named', async () => {
    fake.setDefault('embed-test', { kind: 'status', status: 429, retryAfterMs: 1 });
    const embedder = await embedderFor({ dimensions: 8, max_retries: 2 });
    const error = await embedder.embed(['x']).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).failure).toBe('rate_limited');
    expect((error as Error).message).toMatch(/embed-test.*after 3 attempts/);
    expect(fake.requests).toHaveLength(3);
  });

  it('ends a request that does not answer at timeout_ms, without retrying it, and counts it at its most', async () => {
    fake.script('embed-test', [{ kind: 'hang' }]);
    const embedder = await embedderFor({ dimensions: 8, timeout_ms: 300, price_per_million_tokens: 1 });
    const error = await embedder.embed(['hanging']).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).failure).toBe('timeout');
    expect((error as Error).message).toMatch(/embed-test.*300 ms/);
    await until(() => fake.requests[0]?.abortedByClient === true);
    expect(fake.requests).toHaveLength(1);
    expect(embedder.spend.tokens).toBe(maxInputTokens(['hanging']));
  });

  it('refuses a vector of another length than the configured one, naming the model and both counts', async () => {
    fake.script('embed-test', [
      {
        kind: 'status',
        status: 200,
        body: {
          object: 'list',
          model: 'embed-test',
          data: [{ object: 'embedding', index: 0, embedding: [0.6, 0.8, 0, 0, 0] }],
          usage: { prompt_tokens: 1, total_tokens: 1 },
        },
      },
    ]);
    const embedder = await embedderFor({ dimensions: 8 });
    const error = await embedder.embed(['x']).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EmbeddingDimensionError);
    expect((error as Error).message).toMatch(/embed-test.*5 dimensions, expected 8/);
  });

  it('refuses a request that could pass the ceiling before sending anything', async () => {
    const embedder = await embedderFor({ dimensions: 8, price_per_million_tokens: 1000, ceiling_usd: 0.001 });
    const error = await embedder.embed(['a text of some length']).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EmbeddingCeilingError);
    expect((error as Error).message).toMatch(/ceiling_usd \$0\.001.*not sent/);
    expect(fake.requests).toHaveLength(0);
    expect(embedder.spend.usd).toBe(0);
  });

  it('stops sending once the next request could pass the ceiling, having spent no more than it', async () => {
    // 40 bytes: at most 44 tokens ($0.044 at $1000 a million), billed 10 ($0.01) by the fake.
    const text = (n: number) => `${n}`.padEnd(40, '.');
    const embedder = await embedderFor({ dimensions: 8, batch_size: 1, concurrency: 1, price_per_million_tokens: 1000, ceiling_usd: 0.06 });
    const error = await embedder.embed([text(1), text(2), text(3), text(4)]).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EmbeddingCeilingError);
    // $0 + 0.044 and $0.01 + 0.044 fit under $0.06; $0.02 + 0.044 does not.
    expect(fake.requests).toHaveLength(2);
    expect(embedder.spend.usd).toBeCloseTo(0.02, 10);
    expect(embedder.spend.usd).toBeLessThanOrEqual(0.06);
  });
});

describe('EMBEDDINGS_CONFIG', () => {
  it('names the file and the key of every problem', () => {
    expect(() => parseEmbeddingsConfig('base_url: http://127.0.0.1:1/v1\n', 'emb.yaml')).toThrow(/^emb\.yaml: model: /);
    expect(() => parseEmbeddingsConfig('base_url: not a url\nmodel: m\n', 'emb.yaml')).toThrow(/^emb\.yaml: base_url: must be an absolute http\(s\) URL/);
    expect(() => parseEmbeddingsConfig('base_url: http://h/v1\nmodel: m\nbatch_size: 0\n', 'emb.yaml')).toThrow(/^emb\.yaml: batch_size: /);
    expect(() => parseEmbeddingsConfig('base_url: http://h/v1\nmodel: m\ndimensions: -3\n', 'emb.yaml')).toThrow(/^emb\.yaml: dimensions: /);
    expect(() => parseEmbeddingsConfig('base_url: http://h/v1\nmodel: m\napi_key_env: my key\n', 'emb.yaml')).toThrow(
      /^emb\.yaml: api_key_env: must be the name/,
    );
    expect(() => parseEmbeddingsConfig('base_url: http://h/v1\nmodel: m\ndimension: 256\n', 'emb.yaml')).toThrow(/emb\.yaml: .*"dimension"/);
    expect(() => parseEmbeddingsConfig('model: [unclosed\n', 'emb.yaml')).toThrow(EmbeddingsConfigError);
  });

  it('applies the defaults of the optional keys', () => {
    const config = parseEmbeddingsConfig('base_url: http://h/v1\nmodel: m\n', 'emb.yaml');
    expect(config).toMatchObject({ batch_size: 64, concurrency: 2, timeout_ms: 30_000, max_retries: 4, price_per_million_tokens: 0, ceiling_usd: 10 });
    expect(config.dimensions).toBeUndefined();
    expect(config.api_key_env).toBeUndefined();
  });

  it('names a missing file and a key variable that is not set', async () => {
    const dir = tempDir('embeddings-config');
    expect(() => loadEmbeddingsConfig(path.join(dir, 'absent.yaml'))).toThrow(/EMBEDDINGS_CONFIG names .*absent\.yaml, which does not exist/);
    const file = path.join(dir, 'embeddings.yaml');
    writeFileSync(file, `base_url: ${fake.baseURL}\nmodel: embed-test\napi_key_env: EMBED_TEST_MISSING_KEY\n`);
    await expect(createConfiguredEmbedder({ EMBEDDINGS_CONFIG: file })).rejects.toThrow(/embeddings\.yaml: api_key_env: .*EMBED_TEST_MISSING_KEY is not set/);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('builds keyed to the embedding model', () => {
  function writeConfig(dir: string, model: string, extra = ''): string {
    const file = path.join(dir, `${model}.yaml`);
    writeFileSync(file, `base_url: ${fake.baseURL}\nmodel: ${model}\ndimensions: 16\nbatch_size: 16\n${extra}`);
    return file;
  }

  it('builds with EMBEDDINGS_CONFIG, reuses its vectors, re-embeds everything for another model, and the server refuses a mismatch', async () => {
    const contentDir = writeFixtureContent();
    const dir = tempDir('openai-build');
    const artifactsDir = path.join(dir, 'artifacts');
    const cacheDir = path.join(dir, 'cache');
    const build = (file: string) => buildArtifacts({ contentDir, artifactsDir, cacheDir, env: { EMBEDDINGS_CONFIG: file } });
    const metaOf = () => JSON.parse(readFileSync(artifactPaths(artifactsDir).searchMeta, 'utf8')) as { embedder: { id: string; dims: number } };

    const first = await build(writeConfig(dir, 'embed-a'));
    expect(metaOf().embedder).toEqual({ id: 'openai-compatible:embed-a@16', dims: 16 });
    // Every distinct passage text embedded once (the fixture repeats a few).
    expect(first.embedded).toBeGreaterThan(0);
    expect(first.embedded).toBeLessThanOrEqual(first.chunks);
    expect(fake.counts('embed-a')).toBeGreaterThan(0);
    expect(fake.requests.every((request) => request.model === 'embed-a')).toBe(true);

    fake.reset();
    const again = await build(writeConfig(dir, 'embed-a'));
    expect(again.embedded).toBe(0);
    expect(fake.requests).toHaveLength(0);

    const changed = await build(writeConfig(dir, 'embed-b'));
    expect(metaOf().embedder).toEqual({ id: 'openai-compatible:embed-b@16', dims: 16 });
    expect(changed.embedded).toBe(first.embedded);
    expect(fake.counts('embed-b')).toBeGreaterThan(0);
    expect(fake.counts('embed-a')).toBe(0);

    const previousModel = await createConfiguredEmbedder({ EMBEDDINGS_CONFIG: writeConfig(dir, 'embed-a') });
    const refused = await loadCorpus(artifactsDir, previousModel.embedder).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(ArtifactsEmbedderMismatchError);
    expect((refused as Error).message).toContain('openai-compatible:embed-b@16');
    expect((refused as Error).message).toContain('openai-compatible:embed-a@16');
    const sameModel = await createConfiguredEmbedder({ EMBEDDINGS_CONFIG: writeConfig(dir, 'embed-b') });
    const corpus = await loadCorpus(artifactsDir, sameModel.embedder);
    expect(corpus.search.embedder.id).toBe('openai-compatible:embed-b@16');

    // The server process: started with the other model it refuses to start; with the same one it answers questions through the endpoint.
    const serverEnv = { ARTIFACTS_DIR: artifactsDir, STORE_PATH: path.join(dir, 'store.db'), SITE_DIR: path.join(dir, 'none'), EMBED_WORKERS: '0' };
    const refusedStart = await startServerProcess({ ...serverEnv, EMBEDDINGS_CONFIG: writeConfig(dir, 'embed-a') }).catch((caught: unknown) => caught);
    expect((refusedStart as Error).message).toMatch(/built with the embedder openai-compatible:embed-b@16.*embedded with openai-compatible:embed-a@16/);
    const server = await startServerProcess({ ...serverEnv, EMBEDDINGS_CONFIG: writeConfig(dir, 'embed-b') });
    try {
      fake.reset();
      const response = await fetch(`${server.base}/api/query?q=${encodeURIComponent('a question for the configured model')}`);
      expect(response.status).toBe(200);
      expect(inputsOf('embed-b').flat()).toContain('a question for the configured model');
    } finally {
      const exited = server.child.exitCode !== null ? Promise.resolve() : new Promise((resolve) => server.child.once('exit', resolve));
      server.child.kill('SIGTERM');
      await exited;
    }
  });

  it('plans before anything is sent: the texts the cache lacks, the most tokens and dollars, the artifacts untouched', async () => {
    const contentDir = writeFixtureContent();
    const dir = tempDir('openai-plan');
    const artifactsDir = path.join(dir, 'artifacts');
    const cacheDir = path.join(dir, 'cache');
    const file = writeConfig(dir, 'embed-plan', 'price_per_million_tokens: 0.02\nceiling_usd: 1\n');
    const plan = (await buildArtifacts({ contentDir, artifactsDir, cacheDir, env: { EMBEDDINGS_CONFIG: file }, plan: true })).plan!;
    expect(fake.requests).toHaveLength(0);
    expect(existsSync(artifactsDir)).toBe(false);
    expect(readdirSync(dir).filter((name) => name.includes('staging'))).toEqual([]);
    expect(plan).toMatchObject({ embedder: 'openai-compatible:embed-plan@16', pricePerMillionTokens: 0.02, ceilingUsd: 1 });
    expect(plan.texts).toBeGreaterThan(0);
    expect(plan.maxTokens).toBeGreaterThanOrEqual(plan.characters);

    // The build then sends exactly what was planned, and never more tokens than the plan's bound.
    const built = await buildArtifacts({ contentDir, artifactsDir, cacheDir, env: { EMBEDDINGS_CONFIG: file } });
    expect(built.embedded + built.answersEmbedded).toBe(plan.texts);
    expect(inputsOf('embed-plan').flat()).toHaveLength(plan.texts);
    const billed = fake.requestsFor('embed-plan').reduce((sum, request) => sum + maxInputTokens((request.body as { input: string[] }).input), 0);
    expect(billed).toBe(plan.maxTokens);
    fake.reset();
    const again = (await buildArtifacts({ contentDir, artifactsDir, cacheDir, env: { EMBEDDINGS_CONFIG: file }, plan: true })).plan!;
    expect(again.texts).toBe(0);
    expect(fake.requests).toHaveLength(0);
    expect(planLine(again)).toMatch(/0 texts to embed.*Nothing was sent/);
    expect(planLine({ ...plan, ceilingUsd: 1e-9 })).toMatch(/could pass ceiling_usd .*the build would stop there/);
    expect(planLine({ ...plan, pricePerMillionTokens: null, ceilingUsd: null })).toMatch(/costs nothing/);
  });

  it('a build killed mid-way resumes from the cache, sending again only the round it had in flight', async () => {
    const contentDir = writeFixtureContent();
    const dir = tempDir('openai-kill');
    const file = writeConfig(dir, 'embed-kill', 'concurrency: 1\n');
    writeFileSync(file, readFileSync(file, 'utf8').replace('batch_size: 16', 'batch_size: 2'));
    const env = {
      ...process.env,
      CONTENT_DIR: contentDir,
      ARTIFACTS_DIR: path.join(dir, 'artifacts'),
      EMBEDDING_CACHE_DIR: path.join(dir, 'cache'),
      EMBEDDINGS_CONFIG: file,
    };
    const cli = [path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(REPO_ROOT, 'scripts/build.ts')];
    fake.setDefault('embed-kill', { kind: 'answer', content: '', delayMs: 150 });
    const killed = execFile(process.execPath, cli, { cwd: REPO_ROOT, env });
    const exited = new Promise((resolve) => killed.once('exit', resolve));
    await until(() => fake.counts('embed-kill') >= 5);
    killed.kill('SIGKILL');
    await exited;
    const before = inputsOf('embed-kill') as string[][];
    // One request at a time, each its own round: every request before the last was answered and kept.
    const paid = before.slice(0, -1).flat();
    expect(paid.length).toBeGreaterThanOrEqual(4);

    fake.reset();
    const resumed = await new Promise<number | null>((resolve) => {
      const child = execFile(process.execPath, cli, { cwd: REPO_ROOT, env }, () => resolve(child.exitCode));
    });
    expect(resumed).toBe(0);
    const after = (inputsOf('embed-kill') as string[][]).flat();
    expect(after.filter((text) => paid.includes(text))).toEqual([]);
    expect(after.length).toBeGreaterThan(0);
    const meta = JSON.parse(readFileSync(artifactPaths(path.join(dir, 'artifacts')).searchMeta, 'utf8')) as {
      embedder: { id: string };
      chunk_records: number[];
    };
    expect(meta.embedder.id).toBe('openai-compatible:embed-kill@16');
  });

  it('the calibration commands embed with the configured model and record which', async () => {
    const contentDir = writeFixtureContent();
    const dir = tempDir('openai-calibrate');
    const file = writeConfig(dir, 'embed-calibrate');
    const env = { ...process.env, CONTENT_DIR: contentDir, EMBEDDING_CACHE_DIR: path.join(dir, 'cache'), EMBEDDINGS_CONFIG: file };
    const run = (script: string, args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          [path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(REPO_ROOT, script), ...args],
          { cwd: REPO_ROOT, env },
          (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
        );
      });
    const certified = await run('scripts/certify.ts', ['--calibrate', '--method', 'perturbation-v1']);
    expect(certified.stderr).toContain('certify: embedding with openai-compatible:embed-calibrate@16');
    expect(fake.counts('embed-calibrate')).toBeGreaterThan(0);
    expect(certified.code).toBe(0);
    const written = JSON.parse(readFileSync(path.join(contentDir, 'certification-calibration.json'), 'utf8')) as { embedder: string };
    expect(written.embedder).toBe('openai-compatible:embed-calibrate@16');
    // A configuration that cannot start stops the command as it stops the build: exit 2, the key named.
    writeFileSync(file, `base_url: ${fake.baseURL}\nmodel: embed-calibrate\nbatch_size: many\n`);
    const refused = await run('scripts/certify.ts', ['--calibrate', '--method', 'perturbation-v1']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/batch_size/);
  });

  it('the build CLI stops before overspending, with its own exit code and nothing sent', async () => {
    const contentDir = writeFixtureContent();
    const dir = tempDir('openai-ceiling');
    const file = writeConfig(dir, 'embed-ceiling', 'price_per_million_tokens: 1000000\nceiling_usd: 0.5\n');
    const artifactsDir = path.join(dir, 'artifacts');
    const outcome = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(REPO_ROOT, 'scripts/build.ts')],
        {
          cwd: REPO_ROOT,
          env: { ...process.env, CONTENT_DIR: contentDir, ARTIFACTS_DIR: artifactsDir, EMBEDDING_CACHE_DIR: path.join(dir, 'cache'), EMBEDDINGS_CONFIG: file },
        },
        (_error, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
      );
    });
    expect(outcome.stderr).toMatch(/stopped before overspending: .*embed-ceiling.*ceiling_usd \$0\.5/);
    expect(outcome.code).toBe(EXIT_EMBEDDING_CEILING);
    expect(fake.counts('embed-ceiling')).toBe(0);
    expect(existsSync(artifactsDir)).toBe(false);
  });
});
