/**
 * Origin policy for POST /api/mcp. Browsers send Origin; agents and desktop clients do
 * not, and are allowed. A browser origin must be a loopback origin or on the operator's
 * allow-list (MCP_ALLOWED_ORIGINS), which guards against DNS rebinding: a page on a
 * hostile domain that resolves to this server still sends its own Origin.
 *
 * The request's own Host is deliberately not trusted as "same origin": under DNS
 * rebinding Host and Origin both name the attacker's domain. An operator whose site
 * calls /api/mcp from the browser lists that origin.
 */

const LOOPBACK = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;

/** Parses a comma list of origins: `https://example.org`, `http://host:*` (any port), or `*` (any). */
export function parseAllowedOrigins(value: string | undefined): string[] {
  if (value === undefined) return [];
  const origins = value
    .split(',')
    .map((part) => part.trim().toLowerCase().replace(/\/+$/, ''))
    .filter((part) => part.length > 0);
  for (const origin of origins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s?#]+$/.test(origin)) {
      throw new Error(`MCP_ALLOWED_ORIGINS: "${origin}" is not an origin (scheme://host[:port], host:* for any port, or *)`);
    }
  }
  return origins;
}

export function isOriginAllowed(origin: string, allowed: readonly string[]): boolean {
  const normalized = origin.trim().toLowerCase().replace(/\/+$/, '');
  if (LOOPBACK.test(normalized)) return true;
  return allowed.some((entry) => {
    if (entry === '*') return true;
    if (entry.endsWith(':*')) {
      const base = entry.slice(0, -2);
      return normalized === base || (normalized.startsWith(`${base}:`) && /^\d{1,5}$/.test(normalized.slice(base.length + 1)));
    }
    return normalized === entry;
  });
}
