/** Calls a running Polyphony server over HTTP: the stdio bin's `--url` mode. */
import { parseBody, requestTarget, type AppRequest, type AppResponse, type CallApp } from './types.ts';

export function createFetchCall(baseUrl: string, fetchImpl: typeof fetch = fetch): CallApp {
  const base = new URL(baseUrl);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error(`--url must be an http(s) URL, got ${baseUrl}`);
  const root = base.href.replace(/\/+$/, '');
  return async (request: AppRequest, signal?: AbortSignal): Promise<AppResponse> => {
    const response = await fetchImpl(`${root}${requestTarget(request)}`, {
      method: request.method,
      headers: {
        accept: 'application/json',
        'user-agent': 'polyphony-mcp (stdio proxy)',
        ...request.headers,
        ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
      ...(signal ? { signal } : {}),
    });
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    return { status: response.status, headers, body: parseBody(await response.text(), headers['content-type']) };
  };
}
