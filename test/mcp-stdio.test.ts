/**
 * The stdio bin (bin/polyphony-mcp.ts, issue #5) as a child process: local mode serves the
 * artifacts it loads with the real embedder, --url proxies to a running server. Full lane only
 * (vitest.fast.config.ts): the child loads USE-lite, so the artifacts are built with it too.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { buildApp, tempDir, testEmbedder, type BuiltApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

type Json = Record<string, unknown>;

let built: BuiltApp;
let server: Server;
const clients: Client[] = [];
const noPanel = { base: '' };

const structured = (result: CallToolResult) => result.structuredContent as Json;
const errorOf = (result: CallToolResult) => structured(result).error as Json;

beforeAll(async () => {
  built = await buildApp(writeFixtureContent());
  const corpus = await loadCorpus(built.artifactsDir, await testEmbedder());
  const app = createApp({ corpus, log: () => {} });
  server = await new Promise<Server>((resolve) => {
    const started = app.listen(0, '127.0.0.1', () => resolve(started));
  });
  noPanel.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('stdio bin', () => {
  const BIN = path.join(REPO_ROOT, 'bin', 'polyphony-mcp.ts');
  const spawnClient = async (args: string[], extra: Record<string, string>) => {
    const env = { ...(process.env as Record<string, string>), ...extra };
    // No live panel: the local mode must work from the artifacts alone.
    delete env.PANEL_CONFIG;
    const transport = new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', BIN, ...args], cwd: REPO_ROOT, env, stderr: 'pipe' });
    const client = new Client({ name: 'stdio-test', version: '0.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  };

  it('serves the local artifacts in-process: list tools and read a record', async () => {
    const client = await spawnClient([], { ARTIFACTS_DIR: built.artifactsDir, STORE_PATH: path.join(tempDir('mcp-stdio'), 'store.db') });
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(10);
    const record = (await client.callTool({ name: 'read_divergences', arguments: { id: 'TST-D1' } })) as CallToolResult;
    expect(record.isError).toBeFalsy();
    expect(structured(record)).toMatchObject({ id: 'TST-D1' });
    const context = (await client.callTool({ name: 'fast_context', arguments: { q: 'Can a refusal be owned?' } })) as CallToolResult;
    expect(structured(context).question_received).toBe('Can a refusal be owned?');
    await client.close();
  }, 120_000);

  it('with --url proxies to a running server', async () => {
    const client = await spawnClient(['--url', noPanel.base], {});
    const result = (await client.callTool({ name: 'read_divergences', arguments: { id: 'TST-D9' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(errorOf(result).code).toBe('RECORD_NOT_FOUND');
    const kin = (await client.callTool({ name: 'kin', arguments: { identity: 'alder-2' } })) as CallToolResult;
    expect(structured(kin)).toMatchObject({ recognized_as: 'Alder' });
    await client.close();
  }, 60_000);
});
