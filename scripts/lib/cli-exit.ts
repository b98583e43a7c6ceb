/**
 * Ending a CLI without losing its output. `process.exit()` ends the process at once, and
 * what stdout still holds for a pipe is dropped: `npm run curate -- list | grep …` saw the
 * first 64 KiB (one pipe buffer) whenever the reader was slower than the writer. A CLI
 * instead sets its exit code and leaves through `exitWhenFlushed`, which waits until stdout
 * and stderr have handed everything to the operating system.
 */

/** Resolves once everything written to `stream` before the call has been flushed (or the stream is gone). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || stream.writableEnded) return Promise.resolve();
  // Writes complete in order: the callback of an empty write runs after every earlier one.
  return new Promise((resolve) => stream.write('', () => resolve()));
}

/**
 * A reader that goes away early (`| head -c 1000`) is not an error of this program: writes
 * fail with EPIPE, which would otherwise crash it with a stack trace. The output nobody reads
 * is dropped and the work carries on (an export still writes every file), ending with the
 * code it would have had.
 */
export function quietOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
}

/**
 * Sets the exit code, waits for stdout and stderr to drain, then exits (explicitly, so that
 * a library's lingering handle, e.g. TensorFlow's, cannot keep a finished CLI alive).
 */
export async function exitWhenFlushed(code: number): Promise<never> {
  process.exitCode = code;
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}
