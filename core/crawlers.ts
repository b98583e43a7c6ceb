/**
 * What crawlers read: robots.txt and the sitemap protocol (sitemaps.org 0.9). Pure: the
 * routes give the base URL and the paths that are served.
 */

/**
 * URLs in one sitemap file; past it, /sitemap.xml is an index of pages. The protocol allows
 * 50,000, but one such page is 3.6 MB to render and compress on the event loop (about
 * 240 ms); 10,000 keeps each request short.
 */
export const SITEMAP_MAX_URLS = 10_000;

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

/** A path from files on disk, each segment percent-encoded: `/works/A B/` → `/works/A%20B/`. */
export function urlPath(segments: readonly string[], trailingSlash: boolean): string {
  const joined = segments.map((segment) => encodeURIComponent(segment)).join('/');
  if (joined === '') return '/';
  return `/${joined}${trailingSlash ? '/' : ''}`;
}

/**
 * Crawlers may read every page and file; the API's computed answers (and live work behind
 * them) are for agents acting on a request, not for indexing, except the entry document.
 */
export function renderRobotsTxt(base: string): string {
  // Most specific first: RFC 9309 picks the longest match, older parsers the first one.
  return ['User-agent: *', 'Allow: /api/agent-entry', 'Disallow: /api/', 'Allow: /', '', `Sitemap: ${base}/sitemap.xml`, ''].join('\n');
}

export function sitemapPageCount(urlCount: number): number {
  return Math.max(1, Math.ceil(urlCount / SITEMAP_MAX_URLS));
}

/** One page (1-based) of the sitemap: a `urlset` of absolute URLs. */
export function renderSitemap(base: string, paths: readonly string[], page = 1): string {
  const slice = paths.slice((page - 1) * SITEMAP_MAX_URLS, page * SITEMAP_MAX_URLS);
  const urls = slice.map((path) => `  <url><loc>${escapeXml(base + path)}</loc></url>`);
  return ['<?xml version="1.0" encoding="UTF-8"?>', '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">', ...urls, '</urlset>', ''].join('\n');
}

/** The index naming each page of a sitemap too large for one file. */
export function renderSitemapIndex(base: string, pageCount: number): string {
  const entries = Array.from({ length: pageCount }, (_, index) => `  <sitemap><loc>${escapeXml(`${base}/sitemap.xml?page=${index + 1}`)}</loc></sitemap>`);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    ...entries,
    '</sitemapindex>',
    '',
  ].join('\n');
}
