/**
 * Where the site's live parts (the Ask page, the Atlas search, play counts, the manifest's
 * refresh) and its links to the API point: `PUBLIC_API_ORIGIN` at build time, for a site put on
 * any static host with the API on another origin (docs/OPERATIONS.md); unset, the site's own
 * origin, as when one process serves both. The API answers every origin (CORS `*`).
 */
function apiOrigin(value: string | undefined): string {
  if (value === undefined || value.trim() === '') return '';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`PUBLIC_API_ORIGIN: ${JSON.stringify(value)} is not an absolute URL, e.g. https://api.polyphony.example`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.pathname !== '/' || url.search || url.hash) {
    throw new Error(`PUBLIC_API_ORIGIN: ${JSON.stringify(value)} must be an http(s) origin without a path, query or fragment`);
  }
  return url.origin;
}

export const API_ORIGIN: string = apiOrigin(import.meta.env.PUBLIC_API_ORIGIN as string | undefined);

/** An API path (`/api/…`) as the site must call or link it. */
export function apiUrl(path: string): string {
  return API_ORIGIN + path;
}
