/**
 * The lint rule of issue 26 (eslint-rules/request-path.js): on the request path before the
 * depth limit, no function calls itself, directly or through map and the like; and the files
 * that run there are the ones the repository's lint configuration holds to it.
 */
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import requestPath from '../eslint-rules/request-path.js';
import { REPO_ROOT } from '../core/paths.ts';

async function lint(code: string): Promise<string[]> {
  const eslint = new ESLint({
    cwd: REPO_ROOT,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: (await import('typescript-eslint')).parser },
        plugins: { 'request-path': requestPath },
        rules: { 'request-path/no-recursion': 'error' },
      },
    ],
  });
  const [result] = await eslint.lintText(code, { filePath: path.join(REPO_ROOT, 'api/http/sample.ts') });
  return result!.messages.map((message) => message.message);
}

describe('request-path/no-recursion', () => {
  it('refuses the copy that overflowed (a function handed to map inside itself)', async () => {
    const messages = await lint(`export function storable(value: unknown): unknown {
  const copy = (item: unknown): unknown => (Array.isArray(item) ? item.map(copy) : item);
  return copy(value);
}`);
    expect(messages).toEqual([expect.stringMatching(/^copy calls itself/)]);
  });

  it('refuses direct recursion in declarations and expressions', async () => {
    const messages = await lint(`function depth(value: unknown): number {
  return Array.isArray(value) ? 1 + Math.max(0, ...value.map((inner) => depth(inner))) : 0;
}
export const walk = function (value: unknown): void { if (Array.isArray(value)) value.forEach(walk); };
export { depth };`);
    expect(messages).toEqual([expect.stringMatching(/^depth calls itself/), expect.stringMatching(/^walk calls itself/)]);
  });

  it('lets an explicit stack, and a listener that removes itself, through', async () => {
    const messages = await lint(`import type { Readable } from 'node:stream';
export function count(value: unknown, stream: Readable): number {
  const pending = [value];
  let seen = 0;
  while (pending.length > 0) { const item = pending.pop(); seen++; if (Array.isArray(item)) pending.push(...item); }
  const onData = () => { stream.off('data', onData); };
  stream.on('data', onData);
  return seen;
}`);
    expect(messages).toEqual([]);
  });

  it('holds the body preflight, the edge middleware and the text helpers to the rule', async () => {
    const eslint = new ESLint({ cwd: REPO_ROOT });
    for (const file of [
      'api/app.ts',
      'api/http/body-preflight.ts',
      'api/http/text-guard.ts',
      'api/mcp/http.ts',
      'core/well-formed-text.ts',
      'storage/text-check.ts',
    ]) {
      const config = (await eslint.calculateConfigForFile(path.join(REPO_ROOT, file))) as { rules: Record<string, unknown> };
      expect(config.rules['request-path/no-recursion'], file).toEqual([2]);
    }
  });
});
