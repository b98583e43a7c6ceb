/**
 * The house (issue 29, item 9): no function in production code longer than 150 lines, and no
 * import circle among production files. Measured with the TypeScript compiler's parser, so a
 * function is what the compiler calls one (declarations, expressions, arrows, methods,
 * constructors, accessors), and its length runs from its first line to its last, nested
 * functions included (a 200-line factory of small closures is still a 200-line function).
 *
 * Imports: every static `import … from`, `export … from` and `import('…')` of a relative path
 * is an edge, type-only ones included. A type-only import costs nothing at run time, but a
 * circle of types is still a circle to the reader (neither file can be understood first) and
 * the layer rule counts them too; the circles issue 29 named were of both kinds.
 */
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const productionFolders = ['api', 'core', 'providers', 'storage', 'content-files', 'scripts', 'schemas'];
const maxFunctionLines = 150;

function sourceFiles(folder: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(folder)) {
    const path = join(folder, entry);
    if (statSync(path).isDirectory()) files.push(...sourceFiles(path));
    else if (/\.(ts|mts|cts)$/.test(entry) && !entry.endsWith('.d.ts') && !/\.test\.ts$/.test(entry)) files.push(path);
  }
  return files;
}

const files = productionFolders.flatMap((folder) => sourceFiles(join(root, folder))).sort();
const parsed = new Map(files.map((file) => [file, ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)]));

function functionName(node: ts.Node): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isFunctionExpression(node)) && node.name) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if ((ts.isGetAccessor(node) || ts.isSetAccessor(node)) && node.name) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText();
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText().slice(0, 60)})`;
  return '(anonymous)';
}

/** Every function longer than the limit, as `file:line name (n lines)`. */
export function longFunctions(limit = maxFunctionLines): string[] {
  const found: string[] = [];
  for (const [file, source] of parsed) {
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        const lines = last - first + 1;
        if (lines > limit) found.push(`${relative(root, file)}:${first + 1} ${functionName(node)} (${lines} lines)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  const candidates = [base, base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((candidate) => parsed.has(candidate) || (existsSync(candidate) && files.includes(candidate)));
}

function importsOf(file: string, source: ts.SourceFile): string[] {
  const targets: string[] = [];
  const visit = (node: ts.Node): void => {
    let specifier: ts.Expression | undefined;
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) specifier = node.moduleSpecifier;
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) specifier = node.arguments[0];
    if (specifier && ts.isStringLiteral(specifier)) {
      const target = resolveImport(file, specifier.text);
      if (target) targets.push(target);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return [...new Set(targets)];
}

/** Every import circle among production files (strongly connected components of more than one file). */
export function importCircles(): string[][] {
  const graph = new Map([...parsed].map(([file, source]) => [file, importsOf(file, source)]));
  // Tarjan's strongly connected components.
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const connect = (file: string): void => {
    indices.set(file, index);
    low.set(file, index);
    index += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!indices.has(target)) {
        connect(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, indices.get(target)!));
    }
    if (low.get(file) === indices.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(relative(root, member));
      } while (member !== file);
      if (component.length > 1 || (graph.get(file) ?? []).includes(file)) circles.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!indices.has(file)) connect(file);
  return circles;
}

describe('the house', () => {
  it('reads the production files', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it(`holds no function longer than ${maxFunctionLines} lines in production code`, () => {
    expect(longFunctions()).toEqual([]);
  });

  it('holds no import circle among production files, type-only imports included', () => {
    expect(importCircles()).toEqual([]);
  });
});
