/**
 * How deep a JSON request body may nest. JSON.parse reads any depth, but code that walks a
 * body recursively (JSON.stringify included, which overflows the stack near 5,000 levels)
 * would crash on a 40 kB body of nested brackets. No request of this API nests beyond a
 * handful of levels, so deeper bodies are refused before any route sees them.
 */
import { apiError, type ApiError } from '../../schemas/errors.ts';

export const MAX_BODY_DEPTH = 64;

/**
 * Whether `value` nests arrays and objects more than `limit` levels deep (`[]` and `{}` are
 * one level, a scalar none). Iterative, so that the check itself has no depth to overflow;
 * it stops at the first container past the limit.
 */
export function nestsDeeperThan(value: unknown, limit: number = MAX_BODY_DEPTH): boolean {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (pending.length > 0) {
    const { value: current, depth } = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > limit) return true;
    const children = Array.isArray(current) ? current : Object.values(current as Record<string, unknown>);
    for (const child of children) if (child !== null && typeof child === 'object') pending.push({ value: child, depth: depth + 1 });
  }
  return false;
}

export function bodyTooDeep(): ApiError {
  return apiError(
    'BODY_TOO_DEEP',
    `the request body nests arrays or objects more than ${MAX_BODY_DEPTH} levels deep`,
    'Send the documented flat JSON object; see /openapi.json for the body schema.',
    {
      details: { max_depth: MAX_BODY_DEPTH },
      suggestedNextCall: { method: 'GET', path: '/openapi.json' },
    },
  );
}
