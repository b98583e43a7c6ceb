/**
 * Checks each response against the served /openapi.json and the §7 envelope rule:
 * every 4xx/5xx JSON body is an error envelope, and no body carries a stack trace.
 */
import request from 'supertest';
import type { Express } from 'express';
import { expect } from 'vitest';
import { createOpenApiValidator } from './openapi.ts';

export interface ContractChecker {
  check(method: string, url: string, response: request.Response): void;
}

export async function createContractChecker(app: Express): Promise<ContractChecker> {
  const document = (await request(app).get('/openapi.json')).body as Record<string, unknown>;
  const validator = createOpenApiValidator(document);
  return {
    check(method, url, response) {
      const pathOnly = url.split('?')[0]!;
      const contentType = String(response.headers['content-type'] ?? '');
      const problems = validator.validate(
        method,
        decodeURIComponent(pathOnly),
        response.status,
        contentType.includes('json') ? response.body : response.text,
        contentType,
      );
      expect(problems, `${method} ${url} → ${response.status}`).toEqual([]);
      // The MCP endpoint answers protocol errors in JSON-RPC form, documented as such.
      const jsonRpc = (response.body as { jsonrpc?: unknown } | undefined)?.jsonrpc === '2.0';
      if (response.status >= 400 && contentType.includes('json') && !jsonRpc) {
        expect(response.body.error).toMatchObject({
          code: expect.any(String),
          message: expect.any(String),
          agent_action: expect.any(String),
          retryable: expect.any(Boolean),
        });
      }
      expect(response.text ?? '').not.toMatch(/\n\s+at .+\.(ts|js):\d+/);
    },
  };
}
