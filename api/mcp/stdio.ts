/**
 * The MCP server over stdio, for desktop clients that launch a command. Two modes:
 *   local (default)  loads the artifacts (ARTIFACTS_DIR, like `npm run serve`) and calls
 *                    the app in-process; needs the built artifacts on this machine.
 *   --url <base>     proxies every tool call to a running Polyphony server over HTTP.
 * stdout carries the protocol only; everything else is written to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createInProcessCall } from './in-process.ts';
import { createFetchCall } from './remote-call.ts';
import { createMcpServer } from './server.ts';
import type { CallApp } from './types.ts';

export const USAGE = `polyphony-mcp: the Polyphony MCP tools over stdio.

Usage:
  polyphony-mcp                 serve the local artifacts (ARTIFACTS_DIR, default ./artifacts)
  polyphony-mcp --url <base>    proxy to a running server, e.g. --url https://example.org

Environment (local mode): ARTIFACTS_DIR, STORE_PATH, PANEL_CONFIG and the panel's API keys,
as for \`npm run serve\`.`;

export interface StdioOptions {
  url?: string;
  help: boolean;
}

export function parseArguments(argv: readonly string[]): StdioOptions {
  const options: StdioOptions = { help: false };
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index]!;
    if (argument === '--help' || argument === '-h') options.help = true;
    else if (argument === '--url') {
      const value = argv[++index];
      if (!value) throw new Error('--url needs a base URL, e.g. --url http://127.0.0.1:4321');
      options.url = value;
    } else if (argument.startsWith('--url=')) options.url = argument.slice('--url='.length);
    else throw new Error(`unknown argument ${argument}\n\n${USAGE}`);
  }
  return options;
}

export async function runStdio(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const log = (line: string) => process.stderr.write(`[polyphony-mcp] ${line}\n`);
  const options = parseArguments(argv);
  if (options.help) {
    process.stderr.write(`${USAGE}\n`);
    return;
  }

  let call: CallApp;
  let close = async () => {};
  if (options.url) {
    call = createFetchCall(options.url);
    log(`proxying to ${options.url}`);
  } else {
    const { createLocalApp } = await import('./local-app.ts');
    const local = await createLocalApp(env, log);
    call = createInProcessCall(local.app, { remoteAddress: '127.0.0.1', host: 'localhost', headers: { 'user-agent': 'polyphony-mcp (stdio)' } });
    close = () => local.store.close();
    log(local.summary);
  }

  const server = createMcpServer({ call });
  const transport = new StdioServerTransport();
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void server
      .close()
      .then(close)
      .finally(() => process.exit(0));
  };
  transport.onclose = stop;
  process.stdin.on('end', stop);
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await server.connect(transport);
  log('ready on stdio');
}
