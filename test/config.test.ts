import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BODY_TIMEOUT_MS, formatWindow, loadConfig, RATE_LIMIT_SETTINGS } from '../api/config.ts';
import { DEFAULT_RATE_LIMITS } from '../api/http/rate-limit.ts';
import { REPO_ROOT } from '../core/paths.ts';

describe('server configuration: embedding threads', () => {
  it('gives one question one thread unless EMBED_THREADS says otherwise, whatever the cores or processes, and refuses a bad value by name', () => {
    // (the WebAssembly fallback is not threaded, ADR 0012: EMBED_THREADS is the native kernels' alone)
    for (const env of [{}, { WORKERS: '4' }, { EMBED_WORKERS: '0' }]) expect(loadConfig(env).embedThreads).toBe(1);
    expect(loadConfig({ EMBED_THREADS: '2' }).embedThreads).toBe(2);
    expect(loadConfig({ EMBED_THREADS: '3' }).embedThreads).toBe(3);
    expect(() => loadConfig({ EMBED_THREADS: '0' })).toThrow(/EMBED_THREADS/);
    expect(() => loadConfig({ EMBED_THREADS: 'two' })).toThrow(/EMBED_THREADS/);
    expect(loadConfig({}).embedKernels).toBe('auto');
    expect(loadConfig({ EMBED_KERNELS: 'wasm' }).embedKernels).toBe('wasm');
    expect(loadConfig({ EMBED_KERNELS: 'avx2' }).embedKernels).toBe('avx2');
    expect(() => loadConfig({ EMBED_KERNELS: 'cuda' })).toThrow(/EMBED_KERNELS/);
  });
});

describe('server configuration: rate limits, proxies, base URL, body timeout', () => {
  it('reads every rate limit from the environment, defaults unchanged', () => {
    expect(loadConfig({}).limits).toEqual(DEFAULT_RATE_LIMITS);
    for (const setting of RATE_LIMIT_SETTINGS) {
      const limits = loadConfig({ [setting.env]: '7/60' }).limits;
      expect(limits[setting.limit], setting.env).toEqual({ limit: 7, windowMs: 60_000 });
      expect(() => loadConfig({ [setting.env]: '7 per minute' }), setting.env).toThrow(new RegExp(setting.env));
      expect(() => loadConfig({ [setting.env]: '7/0' }), setting.env).toThrow(new RegExp(setting.env));
    }
    // Every limit the app enforces has a setting.
    expect(RATE_LIMIT_SETTINGS.map((setting) => setting.limit).sort()).toEqual(Object.keys(DEFAULT_RATE_LIMITS).sort());
  });

  it('the README lists every rate-limit setting with its default', () => {
    const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    for (const setting of RATE_LIMIT_SETTINGS) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${setting.env}\``));
      expect(row, `README row for ${setting.env}`).toBeDefined();
      expect(row).toContain(`\`${formatWindow(DEFAULT_RATE_LIMITS[setting.limit])}\``);
    }
  });

  it('TRUST_PROXY takes a hop count or proxy addresses, and refuses "true" (any client could forge its address)', () => {
    expect(loadConfig({}).trustProxy).toBeUndefined();
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBeUndefined();
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,fd00::/8' }).trustProxy).toBe('loopback,10.0.0.0/8,fd00::/8');
    expect(loadConfig({ TRUST_PROXY: '192.0.2.1/255.255.255.0' }).trustProxy).toBe('192.0.2.1/255.255.255.0');
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY.*number of proxies/);
    expect(() => loadConfig({ TRUST_PROXY: 'proxy.internal' })).toThrow(/TRUST_PROXY: "proxy.internal"/);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/33' })).toThrow(/TRUST_PROXY/);
  });

  it('PUBLIC_BASE_URL is an absolute http(s) URL without a trailing slash; BODY_TIMEOUT_MS has a default', () => {
    expect(loadConfig({}).publicBaseUrl).toBeUndefined();
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://polyphony.example/' }).publicBaseUrl).toBe('https://polyphony.example');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://example.org/polyphony' }).publicBaseUrl).toBe('https://example.org/polyphony');
    expect(() => loadConfig({ PUBLIC_BASE_URL: 'polyphony.example' })).toThrow(/PUBLIC_BASE_URL/);
    expect(() => loadConfig({ PUBLIC_BASE_URL: 'ftp://polyphony.example' })).toThrow(/PUBLIC_BASE_URL/);
    expect(() => loadConfig({ PUBLIC_BASE_URL: 'https://polyphony.example/?a=1' })).toThrow(/PUBLIC_BASE_URL/);
    expect(loadConfig({}).bodyTimeoutMs).toBe(DEFAULT_BODY_TIMEOUT_MS);
    expect(loadConfig({ BODY_TIMEOUT_MS: '5000' }).bodyTimeoutMs).toBe(5000);
    expect(() => loadConfig({ BODY_TIMEOUT_MS: '10' })).toThrow(/BODY_TIMEOUT_MS/);
  });
});
