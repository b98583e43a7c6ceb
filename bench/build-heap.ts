/**
 * The data build's heap (issue 44): `scripts/build.ts` over a content folder in a child process
 * at Node's default heap limit, with `--trace-gc`, beside the same over the demo content in the
 * same run (the reference). Printed: the live heap at its highest (after a full collection), the
 * heap at its highest before any collection, the limit, and the build's time. Vectors are the
 * hashed stand-in's (devkit/hashed-embedder.ts): embedding is bench/embed.ts's, so the figures
 * are the build's own. The synthetic works are bench/scale.ts's (~640 words of ArguAna
 * sentences, 4 passages each); `--content` builds a folder already written (a kept scale run's).
 *
 *   npx tsx bench/build-heap.ts [--works 25000 | --content <dir>]
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { REPO_ROOT } from '../core/paths.ts';
import { createHashedEmbedder } from '../devkit/hashed-embedder.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { buildBeirContent } from '../scripts/lib/beir.ts';
import { ms, ratio } from './lib.ts';
import { sentencePool, syntheticDocs } from './scale.ts';

interface HeapRun {
  passages: number;
  ms: number;
  /** The highest heap left after a full (mark-compact) collection: what the build holds. */
  liveMb: number;
  /** The highest heap seen before any collection: what it held plus garbage not yet collected. */
  peakMb: number;
  limitMb: number;
}

const GC_LINE = /(Mark-Compact|Scavenge)[^\d]*([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB/;

/** The build over `contentDir` in a child process at the default heap, its --trace-gc read. */
async function measure(contentDir: string, root: string, label: string): Promise<HeapRun> {
  const artifactsDir = path.join(root, `${label}-artifacts`);
  const child = spawn(
    process.execPath,
    ['--trace-gc', '--import', 'tsx', path.join(REPO_ROOT, 'bench', 'build-heap.ts'), '--child', contentDir, artifactsDir, path.join(root, `${label}-cache`)],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let liveMb = 0;
  let peakMb = 0;
  let result: { passages: number; ms: number; limitMb: number } | undefined;
  let pending = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    const lines = (pending + text).split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      const gc = GC_LINE.exec(line);
      if (gc) {
        peakMb = Math.max(peakMb, Number(gc[2]));
        if (gc[1] === 'Mark-Compact') liveMb = Math.max(liveMb, Number(gc[4]));
      } else if (line.startsWith('{"passages"')) result = JSON.parse(line) as typeof result;
    }
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0 || !result)
    throw new Error(`the build over ${contentDir} failed (exit ${code}): out of heap if the last collections above are near the limit`);
  return { ...result, liveMb, peakMb };
}

async function child(contentDir: string, artifactsDir: string, cacheDir: string): Promise<void> {
  const started = performance.now();
  const built = await buildArtifacts({ contentDir, artifactsDir, cacheDir, embedder: createHashedEmbedder(512), log: () => {} });
  console.log(JSON.stringify({ passages: built.chunks, ms: performance.now() - started, limitMb: v8.getHeapStatistics().heap_size_limit / 2 ** 20 }));
}

/** Bytes of the works' files: the corpus's text as it is on disk. */
function worksBytes(contentDir: string): number {
  const dir = path.join(contentDir, 'works');
  return readdirSync(dir).reduce((sum, name) => sum + statSync(path.join(dir, name)).size, 0);
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { works: { type: 'string', default: '25000' }, content: { type: 'string' }, child: { type: 'boolean', default: false } },
  });
  if (values.child) return child(positionals[0]!, positionals[1]!, positionals[2]!);
  const root = mkdtempSync(path.join(os.tmpdir(), 'polyphony-bench-heap-'));
  try {
    const reference = await measure(path.join(REPO_ROOT, 'content'), root, 'demo');
    let contentDir = values.content;
    const label = contentDir ?? `${values.works} synthetic works`;
    if (!contentDir) {
      contentDir = path.join(root, 'content');
      mkdirSync(path.join(contentDir, 'works'), { recursive: true });
      mkdirSync(path.join(contentDir, 'pages'), { recursive: true });
      const works = Number(values.works);
      for (const [file, text] of buildBeirContent(syntheticDocs(works, sentencePool(), works), { name: 'synthetic', idPrefix: 'SYN' }).files) {
        writeFileSync(path.join(contentDir, file), text);
      }
    }
    const large = await measure(contentDir, root, 'large');
    const mb = (value: number) => `${Math.round(value).toLocaleString('en')} MB`;
    console.log(
      `demo content (reference): ${reference.passages} passages in ${ms(reference.ms)}; live heap at most ${mb(reference.liveMb)}, ${mb(reference.peakMb)} before collection`,
    );
    console.log(
      `${label}: ${large.passages.toLocaleString('en')} passages (${mb(worksBytes(contentDir) / 2 ** 20)} of works' files) in ${ms(large.ms)} ` +
        `(${ratio(large.ms, reference.ms)} of the demo's); live heap at most ${mb(large.liveMb)} (${ratio(large.liveMb, reference.liveMb)} of the demo's), ` +
        `${mb(large.peakMb)} before collection, of the default limit of ${mb(large.limitMb)} (${Math.round((100 * large.peakMb) / large.limitMb)} %)`,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

void main();
