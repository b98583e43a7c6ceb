#!/usr/bin/env -S npx tsx
/**
 * Polyphony's MCP tools over stdio, for desktop clients (see docs/MCP.md):
 *   npx tsx bin/polyphony-mcp.ts                 local artifacts, in-process
 *   npx tsx bin/polyphony-mcp.ts --url <base>    proxy to a running server
 */

// stdout is the protocol channel: route stray console output (e.g. from the embedding
// model's runtime) to stderr before anything is loaded.
console.log = console.error;
console.info = console.error;
console.debug = console.error;

const { runStdio } = await import('../api/mcp/stdio.ts');
try {
  await runStdio(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`[polyphony-mcp] ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
