/** Exact track durations on the site (issue 16): read from the WAV header, not the rounded declaration. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDuration } from '../src/lib/artifacts.ts';
import { trackSeconds, wavDuration } from '../src/lib/wav-duration.ts';
import { REPO_ROOT } from '../core/paths.ts';

/** A PCM WAV header (+ optional extra chunk before `data`) for `frames` mono 16-bit frames at `rate` Hz. */
function wav(frames: number, rate: number, extra?: Uint8Array): Uint8Array {
  const dataSize = frames * 2;
  const extraBytes = extra ? 8 + extra.length + (extra.length % 2) : 0;
  const bytes = new Uint8Array(44 + extraBytes + dataSize);
  const view = new DataView(bytes.buffer);
  const put = (offset: number, text: string) => [...text].forEach((char, i) => (bytes[offset + i] = char.charCodeAt(0)));
  put(0, 'RIFF');
  view.setUint32(4, bytes.length - 8, true);
  put(8, 'WAVE');
  put(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, rate, true);
  view.setUint32(28, rate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  let at = 36;
  if (extra) {
    put(at, 'LIST');
    view.setUint32(at + 4, extra.length, true);
    bytes.set(extra, at + 8);
    at += extraBytes;
  }
  put(at, 'data');
  view.setUint32(at + 4, dataSize, true);
  return bytes;
}

describe('wavDuration', () => {
  it('reads the data size over the byte rate, past other chunks (odd sizes padded)', () => {
    expect(wavDuration(wav(22_281 * 16, 16_000))).toBeCloseTo(22.281, 6);
    expect(wavDuration(wav(8_000, 16_000, new Uint8Array(3)))).toBe(0.5);
  });

  it('is undefined for what is not a WAV file', () => {
    expect(wavDuration(new TextEncoder().encode('ID3 not a wave file at all'))).toBeUndefined();
    expect(wavDuration(new Uint8Array(4))).toBeUndefined();
  });

  it('measures the demo track that declares 23 s as 22.28 s, shown exactly', () => {
    const read = (publicPath: string) => readFileSync(path.join(REPO_ROOT, 'content', 'audio', path.basename(publicPath)));
    const seconds = trackSeconds({ duration_seconds: 23, stream_url: '/audio/how-a-split-is-tested.wav' }, read);
    expect(formatDuration(seconds)).toBe('0:22.28');
    // A remote or missing file keeps the declared duration.
    expect(trackSeconds({ duration_seconds: 23, stream_url: 'https://example.org/a.wav' }, read)).toBe(23);
    expect(trackSeconds({ duration_seconds: 23 }, () => undefined)).toBe(23);
  });
});

describe('formatDuration', () => {
  it('keeps hundredths and drops trailing zeros', () => {
    expect(formatDuration(22.28)).toBe('0:22.28');
    expect(formatDuration(17.349375)).toBe('0:17.35');
    expect(formatDuration(10.5)).toBe('0:10.5');
    expect(formatDuration(69)).toBe('1:09');
    expect(formatDuration(3600)).toBe('1:00:00');
    expect(formatDuration(59.999)).toBe('1:00');
  });
});
