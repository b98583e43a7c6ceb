/**
 * The one-way layer rule (docs/ARCHITECTURE.md draws the same table). Every relative import
 * is mapped from the importing file's layer to the imported file's layer; an arrow that is not
 * in LAYERS fails lint, so a back arrow fails CI. The two bottom layers also may not load
 * anything that touches the disk, the network or a provider SDK.
 */
import path from 'node:path';

/** Layer of a repository-relative path; undefined for files outside the layered folders. */
export function layerOf(relativePath) {
  const p = relativePath.split(path.sep).join('/');
  if (/^api\/(http|routes|mcp|openapi)\//.test(p) || /^api\/(app|server|openapi)\.ts$/.test(p)) return 'api-edge';
  const top = p.split('/')[0];
  const known = ['schemas', 'core', 'providers', 'storage', 'content-files', 'api', 'scripts', 'src', 'bin', 'devkit', 'bench', 'test', 'native'];
  return known.includes(top) ? top : undefined;
}

/** Which layers each layer may import (its own layer is always allowed). */
export const LAYERS = {
  schemas: [],
  core: ['schemas'],
  providers: ['core', 'schemas'],
  storage: ['core', 'schemas'],
  'content-files': ['core', 'schemas'],
  api: ['content-files', 'storage', 'providers', 'core', 'schemas'],
  'api-edge': ['api', 'content-files', 'storage', 'providers', 'core', 'schemas'],
  scripts: ['api', 'content-files', 'storage', 'providers', 'core', 'schemas'],
  src: ['core', 'schemas'],
  bin: ['api-edge', 'api', 'storage', 'providers', 'core', 'schemas'],
  devkit: ['scripts', 'api-edge', 'api', 'content-files', 'storage', 'providers', 'core', 'schemas'],
  bench: ['devkit', 'scripts', 'api-edge', 'api', 'content-files', 'storage', 'providers', 'core', 'schemas'],
  test: ['devkit', 'bench', 'scripts', 'bin', 'api-edge', 'api', 'content-files', 'storage', 'providers', 'core', 'schemas', 'src'],
  native: [],
};

/** Packages the pure layers may not load: disk, network, processes, provider SDKs, drivers, HTTP. */
const IMPURE =
  /^(node:)?(fs|fs\/promises|net|http|https|http2|child_process|worker_threads|dgram|dns|cluster)$|^(openai|pg|libsql|express|@modelcontextprotocol\/sdk)(\/|$)/;
const PURE_LAYERS = new Set(['schemas', 'core']);

function check(context, node, source) {
  if (!source || typeof source.value !== 'string') return;
  const spec = source.value;
  const filename = context.filename ?? context.getFilename();
  const root = context.cwd ?? context.getCwd();
  const from = layerOf(path.relative(root, filename));
  if (!from) return;
  if (!spec.startsWith('.')) {
    if (PURE_LAYERS.has(from) && IMPURE.test(spec)) {
      context.report({ node, message: `${from}/ is pure: it may not import '${spec}' (pass the capability in from an outer layer)` });
    }
    return;
  }
  const target = path.relative(root, path.resolve(path.dirname(filename), spec));
  const to = layerOf(target);
  if (!to || to === from) return;
  if (!LAYERS[from].includes(to)) {
    context.report({
      node,
      message: `back arrow: ${from} may not import ${to} ('${spec}'); allowed: ${LAYERS[from].join(', ') || 'nothing of ours'} (docs/ARCHITECTURE.md)`,
    });
  }
}

export default {
  rules: {
    'one-way': {
      meta: { type: 'problem', docs: { description: 'imports follow the layer table in docs/ARCHITECTURE.md' }, schema: [] },
      create(context) {
        return {
          ImportDeclaration: (node) => check(context, node, node.source),
          ExportNamedDeclaration: (node) => check(context, node, node.source),
          ExportAllDeclaration: (node) => check(context, node, node.source),
          ImportExpression: (node) => check(context, node, node.source),
          CallExpression: (node) => {
            if (node.callee.type === 'Identifier' && node.callee.name === 'require' && node.arguments[0]?.type === 'Literal')
              check(context, node, node.arguments[0]);
          },
        };
      },
    },
  },
};
