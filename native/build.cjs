/**
 * Builds native/polyphony_gemm.node (the embedder's AVX2 + FMA matrix products, ADR 0007)
 * with node-gyp, as npm's install step runs it. Where it cannot be built (no compiler, no
 * Node headers) the install still succeeds: the embedder runs on WebAssembly and the server
 * says so when it starts. `--strict` makes a failed build an error (npm run build:native).
 */
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const strict = process.argv.includes('--strict');
const here = __dirname;
const output = path.join(here, 'build', 'Release', 'polyphony_gemm.node');

function nodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  try {
    candidates.push(require.resolve('node-gyp/bin/node-gyp.js'));
  } catch {
    // not installed as a package: npm's own copy above
  }
  return candidates.find((file) => file && fs.existsSync(file));
}

/**
 * @param {string} reason
 * @returns {never}
 */
function fail(reason) {
  const message = `native matrix kernels not built (${reason}); question embeddings run on WebAssembly instead`;
  if (strict) {
    console.error(message);
    process.exit(1);
  }
  console.warn(`polyphony: ${message}`);
  process.exit(0);
}

if (process.env.POLYPHONY_NATIVE === '0') fail('POLYPHONY_NATIVE=0');
if (process.platform !== 'linux' && process.platform !== 'darwin') fail(`not built on ${process.platform}`);
if (process.arch !== 'x64') fail(`the kernels are x86-64 (AVX2 + FMA); this machine is ${process.arch}`);
const gyp = nodeGyp();
if (!gyp) fail('node-gyp not found');
/**
 * Node's headers without a download: npm's nodedir setting when npm runs this, else the
 * headers installed beside this Node (<prefix>/include/node, as release tarballs, Homebrew and
 * distribution packages lay them out); undefined lets node-gyp fetch them, as it does by default.
 * @returns {string | undefined}
 */
function nodeDir() {
  if (process.env.npm_config_nodedir) return process.env.npm_config_nodedir;
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  return fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h')) ? prefix : undefined;
}

const args = [gyp, 'rebuild'];
const headers = nodeDir();
if (headers) args.push(`--nodedir=${headers}`);
const started = Date.now();
const result = spawnSync(process.execPath, args, { cwd: here, encoding: 'utf8' });
if (result.status !== 0 || !fs.existsSync(output)) {
  const detail = `${result.stderr || ''}${result.stdout || ''}`
    .split('\n')
    .filter((line) => /error/i.test(line))
    .slice(0, 3)
    .join(' | ');
  fail(detail || `node-gyp exited with ${result.status}`);
}
console.log(`polyphony: native matrix kernels built in ${((Date.now() - started) / 1000).toFixed(1)} s (${path.relative(process.cwd(), output)})`);
