/**
 * The build's embedding progress line (scripts/lib/embed-progress.ts): rate and time left from
 * an injected clock; rewritten in place on a terminal, every 10 s in a log.
 */
import { describe, expect, it } from 'vitest';
import { createEmbedProgress, formatDuration, progressLine } from '../scripts/lib/embed-progress.ts';

describe('embedding progress', () => {
  it('says done of total, passages a second and the time left at that rate', () => {
    expect(progressLine(0, 1000, 0)).toBe('embedding passages: 0/1000 (0 %), starting');
    expect(progressLine(250, 1000, 5000)).toBe('embedding passages: 250/1000 (25 %), 50.0/s, about 0:15 left');
    expect(progressLine(1000, 1000, 83_000)).toBe('embedding passages: 1000/1000 (100 %), 12.0/s, in 1:23');
    expect(formatDuration(3725)).toBe('1:02:05');
  });

  it('in a log, prints a line every interval and the last one, not one a batch', () => {
    let clock = 0;
    const lines: string[] = [];
    const progress = createEmbedProgress({ log: (line) => lines.push(line), now: () => clock, intervalMs: 10_000 });
    for (let done = 256; done <= 2560; done += 256) {
      clock += 2000;
      progress(done, 2560);
    }
    // batches at 2, 4, ... 20 s: lines at 10 s, 20 s (the last)
    expect(lines).toEqual(['embedding passages: 1280/2560 (50 %), 128.0/s, about 0:10 left', 'embedding passages: 2560/2560 (100 %), 128.0/s, in 0:20']);
  });

  it('on a terminal, rewrites one line each batch and leaves the last one in the log', () => {
    let clock = 0;
    const lines: string[] = [];
    const rewritten: string[] = [];
    const progress = createEmbedProgress({ log: (line) => lines.push(line), rewrite: (line) => rewritten.push(line), now: () => clock });
    clock = 1000;
    progress(100, 200);
    clock = 2000;
    progress(200, 200);
    expect(rewritten).toEqual(['embedding passages: 100/200 (50 %), 100.0/s, about 0:01 left', '']);
    expect(lines).toEqual(['embedding passages: 200/200 (100 %), 100.0/s, in 0:02']);
  });
});
