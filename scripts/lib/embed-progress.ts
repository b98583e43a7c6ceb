/**
 * The build's embedding progress: passages done of those to embed, passages a second since the
 * start, and the time left at that rate. On a terminal one line is rewritten in place (as often
 * as batches finish); in a log (CI) a line is printed every `intervalMs` (10 s) and at the end,
 * so the log shows progress without a line a batch.
 */
import type { EmbedProgress } from './embedding-cache.ts';

export interface EmbedProgressOptions {
  /** A whole line to the build's log. */
  log: (line: string) => void;
  /** Rewrites the current terminal line; given only when the output is a terminal. */
  rewrite?: ((line: string) => void) | undefined;
  now?: () => number;
  intervalMs?: number;
}

/** 83 s → "1:23", 3725 s → "1:02:05". */
export function formatDuration(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  const hours = Math.floor(whole / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  const rest = String(whole % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${rest}` : `${minutes}:${rest}`;
}

/** The line for `done` of `total` after `elapsedMs`. */
export function progressLine(done: number, total: number, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  const percent = total > 0 ? Math.floor((100 * done) / total) : 100;
  const head = `embedding passages: ${done}/${total} (${percent} %)`;
  if (done >= total) return `${head}, ${rate.toFixed(1)}/s, in ${formatDuration(elapsedMs / 1000)}`;
  if (rate === 0) return `${head}, starting`;
  return `${head}, ${rate.toFixed(1)}/s, about ${formatDuration((total - done) / rate)} left`;
}

/** An onProgress for the embedding cache's embedAll. The clock starts when this is created. */
export function createEmbedProgress(options: EmbedProgressOptions): EmbedProgress {
  const now = options.now ?? Date.now;
  const intervalMs = options.intervalMs ?? 10_000;
  const started = now();
  let lastLogged = started;
  return (done, total) => {
    const line = progressLine(done, total, now() - started);
    if (options.rewrite) {
      // The last line goes to the log like any other, in place of the rewritten one.
      options.rewrite(done >= total ? '' : line);
      if (done >= total) options.log(line);
      return;
    }
    if (done >= total || now() - lastLogged >= intervalMs) {
      lastLogged = now();
      options.log(line);
    }
  };
}

/** `rewrite` for a stream that is a terminal: carriage return, the line, the rest cleared. */
export function terminalRewrite(stream: NodeJS.WriteStream): ((line: string) => void) | undefined {
  if (!stream.isTTY) return undefined;
  return (line) => stream.write(`\r${line}\u001b[K`);
}
