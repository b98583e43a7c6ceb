/**
 * The one-way layer rule (eslint-rules/layers.js): docs/ARCHITECTURE.md's table states exactly
 * the rule's table, the rule refuses a back arrow and an impure import in the core, and the
 * repository as it is passes it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import layers, { LAYERS, layerOf } from '../eslint-rules/layers.js';
import { REPO_ROOT } from '../core/paths.ts';

function documentedTable(): Record<string, string[]> {
  const doc = readFileSync(path.join(REPO_ROOT, 'docs/ARCHITECTURE.md'), 'utf8');
  const start = doc.indexOf('| Layer (folder) | May import');
  expect(start).toBeGreaterThan(-1);
  const rows = doc.slice(start).split('\n\n')[0]!.split('\n').slice(2);
  const table: Record<string, string[]> = {};
  for (const row of rows) {
    const [layerCell, importsCell] = row.split(' | ');
    const layer = /`([^`]+)`/.exec(layerCell!)![1]!;
    const mayImport = importsCell!.split(' — ')[0]!;
    table[layer] = /nothing of ours/.test(mayImport) ? [] : [...mayImport.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  }
  return table;
}

async function lint(file: string, code: string) {
  const eslint = new ESLint({
    cwd: REPO_ROOT,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: (await import('typescript-eslint')).parser },
        plugins: { layers },
        rules: { 'layers/one-way': 'error' },
      },
    ],
  });
  const [result] = await eslint.lintText(code, { filePath: path.join(REPO_ROOT, file) });
  return result!.messages.map((m) => m.message);
}

describe('the layer rule', () => {
  it('is the table docs/ARCHITECTURE.md draws, row for row', () => {
    const documented = documentedTable();
    expect(Object.keys(documented).sort()).toEqual(Object.keys(LAYERS).sort());
    for (const [layer, allowed] of Object.entries(LAYERS)) expect([...documented[layer]!].sort(), layer).toEqual([...allowed].sort());
  });

  it('maps folders to layers, the API edge apart from its services', () => {
    expect(layerOf('core/records.ts')).toBe('core');
    expect(layerOf('api/routes/query.ts')).toBe('api-edge');
    expect(layerOf('api/app.ts')).toBe('api-edge');
    expect(layerOf('api/live/service.ts')).toBe('api');
    expect(layerOf('src/lib/artifacts.ts')).toBe('src');
    expect(layerOf('README.md')).toBeUndefined();
  });

  it('refuses a back arrow and names the allowed layers', async () => {
    expect(await lint('core/example.ts', "import { x } from '../api/live/service.ts';\nexport const y = x;\n")).toEqual([
      expect.stringContaining('back arrow: core may not import api'),
    ]);
    expect(await lint('schemas/example.ts', "import { x } from '../core/records.ts';\nexport const y = x;\n")).toEqual([
      expect.stringContaining('schemas may not import core'),
    ]);
    expect(await lint('api/live/example.ts', "import { x } from '../routes/query.ts';\nexport const y = x;\n")).toEqual([
      expect.stringContaining('api may not import api-edge'),
    ]);
    expect(await lint('bench/example.ts', "export { x } from '../test/helpers/contract.ts';\n")).toEqual([
      expect.stringContaining('bench may not import test'),
    ]);
    expect(await lint('scripts/example.ts', "const m = await import('../api/app.ts');\nexport default m;\n")).toEqual([
      expect.stringContaining('scripts may not import api-edge'),
    ]);
  });

  it('lets the allowed arrows through', async () => {
    expect(
      await lint('api/routes/example.ts', "import { x } from '../../core/records.ts';\nimport { y } from '../live/service.ts';\nexport const z = [x, y];\n"),
    ).toEqual([]);
    expect(await lint('src/lib/example.ts', "import { x } from '../../core/records.ts';\nexport const z = x;\n")).toEqual([]);
  });

  it('keeps the core and the schemas pure: no disk, network, SDK or driver', async () => {
    expect(await lint('core/example.ts', "import { readFileSync } from 'node:fs';\nexport const y = readFileSync;\n")).toEqual([
      expect.stringContaining('core/ is pure'),
    ]);
    expect(await lint('schemas/example.ts', "import OpenAI from 'openai';\nexport const y = OpenAI;\n")).toEqual([expect.stringContaining('schemas/ is pure')]);
    expect(await lint('providers/example.ts', "import OpenAI from 'openai';\nexport const y = OpenAI;\n")).toEqual([]);
  });
});
