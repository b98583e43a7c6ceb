import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { defaultEmbedThreads, loadConfig } from '../api/config.ts';

describe('server configuration: embedding threads', () => {
  it('gives one question two threads when the cores allow, counting server processes and embedding workers', () => {
    const cores = availableParallelism();
    expect(defaultEmbedThreads({})).toBe(Math.min(2, cores));
    expect(defaultEmbedThreads({ WORKERS: String(cores) })).toBe(1);
    expect(defaultEmbedThreads({ WORKERS: String(cores * 4) })).toBe(1);
    expect(defaultEmbedThreads({ WORKERS: 'not a number' })).toBe(Math.min(2, cores));
    expect(defaultEmbedThreads({ EMBED_WORKERS: String(cores) })).toBe(1);
    expect(defaultEmbedThreads({ EMBED_WORKERS: '0' })).toBe(Math.min(2, cores));
  });

  it('takes EMBED_THREADS as given, and refuses a bad value by name', () => {
    expect(loadConfig({ EMBED_THREADS: '1' }).embedThreads).toBe(1);
    expect(loadConfig({ EMBED_THREADS: '3' }).embedThreads).toBe(3);
    expect(loadConfig({}).embedThreads).toBe(defaultEmbedThreads({}));
    expect(() => loadConfig({ EMBED_THREADS: '0' })).toThrow(/EMBED_THREADS/);
    expect(() => loadConfig({ EMBED_THREADS: 'two' })).toThrow(/EMBED_THREADS/);
    // native kernels: one thread unless EMBED_THREADS says otherwise
    expect(loadConfig({}).embedNativeThreads).toBe(1);
    expect(loadConfig({ EMBED_THREADS: '2' }).embedNativeThreads).toBe(2);
    expect(loadConfig({}).embedKernels).toBe('auto');
    expect(loadConfig({ EMBED_KERNELS: 'wasm' }).embedKernels).toBe('wasm');
    expect(() => loadConfig({ EMBED_KERNELS: 'cuda' })).toThrow(/EMBED_KERNELS/);
  });
});
