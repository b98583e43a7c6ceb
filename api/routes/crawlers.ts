/**
 * Conventions crawlers and agents look for: /robots.txt, /sitemap.xml (every site page and
 * record twin, absolute URLs) and /.well-known/llms.txt (the same text as /llms.txt).
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Request, Response } from 'express';
import { renderRobotsTxt, renderSitemap, renderSitemapIndex, SITEMAP_MAX_URLS, sitemapPageCount, urlPath } from '../../core/crawlers.ts';
import { ApiError, apiError } from '../../schemas/errors.ts';
import { queryOf, type RouteContext, type RouteDefinition } from './types.ts';
import { z } from 'zod';
import { CACHE_HEADER, queryParameter, textAnswer } from '../openapi/parts.ts';
import type { RouteSpec } from './types.ts';

export interface CrawlerOptions {
  /** The built site (dist/), when it is served. */
  siteDir?: string;
  /** PUBLIC_BASE_URL: origin (and path prefix) of absolute URLs; else the request's own. */
  publicBaseUrl?: string;
}

const RENDERED_PAGES = 16;

/** A host name or address with an optional port, as a Host header may carry it. */
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

const tags = ['static'];

export const ROBOTS: RouteSpec = {
  path: '/robots.txt',
  operations: {
    GET: {
      operationId: 'getRobotsTxt',
      tags,
      summary: 'Rules for crawlers: pages and files open, /api/ closed except /api/agent-entry; names the sitemap',
      query: [],
      responses: {
        200: textAnswer('robots.txt with an absolute Sitemap URL (PUBLIC_BASE_URL, else the scheme and Host of the request).', 'text/plain', CACHE_HEADER),
      },
      errors: { 400: ['UNKNOWN_PARAMETER', 'BAD_REQUEST'] },
    },
  },
};

const SITEMAP_QUERY = [queryParameter('page', z.number().int().min(1), 'One page of a sitemap too large for one file, as named by the index.')] as const;

export const SITEMAP: RouteSpec = {
  path: '/sitemap.xml',
  operations: {
    GET: {
      operationId: 'getSitemap',
      tags,
      summary: 'Sitemap of every site page and record twin',
      description: `A sitemaps.org urlset of absolute URLs (PUBLIC_BASE_URL, else the scheme and Host of the request). Past ${SITEMAP_MAX_URLS} URLs it is a sitemapindex naming /sitemap.xml?page=1, 2, ...`,
      query: SITEMAP_QUERY,
      responses: { 200: textAnswer('Sitemap (urlset) or sitemap index.', 'application/xml', CACHE_HEADER) },
      errors: { 400: ['UNKNOWN_PARAMETER', 'PARAM_REPEATED', 'INVALID_PARAMETER', 'BAD_REQUEST'] },
    },
  },
};

export const WELL_KNOWN_LLMS: RouteSpec = {
  path: '/.well-known/llms.txt',
  operations: {
    GET: {
      operationId: 'getWellKnownLlmsTxt',
      tags,
      summary: 'Orientation text at its well-known address (same as /llms.txt)',
      query: [],
      servedAsFile: true,
      responses: { 200: textAnswer('Orientation text, the same bytes as /llms.txt.', 'text/plain', CACHE_HEADER) },
      errors: { 400: ['UNKNOWN_PARAMETER'], 404: ['ROUTE_NOT_FOUND'] },
    },
  },
};

export function crawlerRoutes(context: RouteContext, options: CrawlerOptions): RouteDefinition[] {
  const { publicDir } = context.corpus;
  // Listed once, on first use: the read model and the site are loaded once per process.
  let paths: string[] | undefined;
  const servedPaths = () => (paths ??= [...sitePages(options.siteDir), ...recordTwins(publicDir)]);
  // Rendered pages, by base URL and page: a few bases at most (the Host names a deployment answers to).
  const rendered = new Map<string, string>();
  const sitemap = (base: string, page: number | undefined): string => {
    const key = `${base}\n${page ?? 0}`;
    let body = rendered.get(key);
    if (body === undefined) {
      const all = servedPaths();
      const pages = sitemapPageCount(all.length);
      body = page === undefined ? (pages === 1 ? renderSitemap(base, all) : renderSitemapIndex(base, pages)) : renderSitemap(base, all, page);
      if (rendered.size >= RENDERED_PAGES) rendered.delete(rendered.keys().next().value!);
      rendered.set(key, body);
    }
    return body;
  };

  const baseOf = (request: Request): string => {
    if (options.publicBaseUrl) return options.publicBaseUrl;
    const host = request.get('host');
    if (!host || !HOST.test(host)) {
      throw apiError(
        'BAD_REQUEST',
        'the Host header is missing or not a host name, and this deployment names no PUBLIC_BASE_URL',
        'Send the Host header of the site (HTTP/1.1 requires it).',
      );
    }
    return `${request.protocol}://${host}`;
  };
  const text = (response: Response, type: string, body: string) => {
    response.setHeader('Content-Type', type);
    response.setHeader('Cache-Control', 'public, max-age=300');
    response.send(body);
  };

  return [
    {
      ...ROBOTS,
      methods: {
        GET: (request, response) => {
          text(response, 'text/plain; charset=utf-8', renderRobotsTxt(baseOf(request)));
        },
      },
    },
    {
      ...SITEMAP,
      methods: {
        GET: (request, response, input) => {
          const page = pageOf(queryOf(input, SITEMAP_QUERY).page, sitemapPageCount(servedPaths().length));
          text(response, 'application/xml; charset=utf-8', sitemap(baseOf(request), page));
        },
      },
    },
    {
      ...WELL_KNOWN_LLMS,
      methods: {
        GET: (request, response) => {
          const file = path.join(publicDir, 'llms.txt');
          if (!existsSync(file)) throw notFound(request);
          response.setHeader('Content-Type', 'text/plain; charset=utf-8');
          response.setHeader('Cache-Control', 'public, max-age=300');
          response.setHeader('Link', '</llms.txt>; rel="canonical"');
          response.sendFile(file);
        },
      },
    },
  ];
}

/** The declaration makes page a whole number from 1; how many pages there are is known only here. */
function pageOf(page: number | undefined, pages: number): number | undefined {
  if (page === undefined) return undefined;
  if (page > pages) {
    throw apiError(
      'INVALID_PARAMETER',
      `page must be a whole number from 1 to ${pages}`,
      `Read /sitemap.xml first: past ${SITEMAP_MAX_URLS} URLs it is an index naming every page.`,
      {
        details: { parameter: 'page', pages },
        suggestedNextCall: { method: 'GET', path: '/sitemap.xml' },
      },
    );
  }
  return page;
}

function notFound(request: Request): ApiError {
  return new ApiError(
    404,
    'ROUTE_NOT_FOUND',
    `nothing is served at ${request.method} ${request.path}`,
    'Start from GET /api/agent-entry, or see /openapi.json for every path.',
    {
      suggestedNextCall: { method: 'GET', path: '/api/agent-entry' },
    },
  );
}

/** Every page of the built site: a folder with an index.html is served at its path with a slash. */
function sitePages(siteDir: string | undefined): string[] {
  if (siteDir === undefined || !existsSync(siteDir)) return [];
  const out: string[] = [];
  const walk = (dir: string, segments: string[]) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(path.join(dir, entry.name), [...segments, entry.name]);
      else if (entry.name === 'index.html') out.push(urlPath(segments, true));
    }
  };
  walk(siteDir, []);
  return out.sort();
}

/** Record twins as the build wrote them: /records/<id>.json and /records/<id>.md. */
function recordTwins(publicDir: string): string[] {
  const dir = path.join(publicDir, 'records');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => /\.(json|md)$/.test(name))
    .sort()
    .map((name) => urlPath(['records', name], false));
}
