/**
 * The corpus list in pages (src/lib/works-list.ts; issue 30: list pages stay paginated at
 * 250,000 works). The demo content built with 20 works a page (SITE_WORKS_PER_PAGE), `astro
 * build` in a child process: every work on exactly one page, in the list's order, pages linked
 * both ways, each with its Markdown twin; the rings' links lead to the page where they begin.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../core/paths.ts';
import type { WorkRecord } from '../core/records.ts';
import { buildApp, tempDir } from '../devkit/app.ts';

const PER_PAGE = 20;
let siteDir: string;
let works: WorkRecord[];

beforeAll(async () => {
  const built = await buildApp(path.join(REPO_ROOT, 'content'));
  works = JSON.parse(readFileSync(path.join(built.artifactsDir, 'data', 'works.json'), 'utf8')) as WorkRecord[];
  siteDir = tempDir('works-pages-site');
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/astro/astro.js'), 'build', '--silent'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ARTIFACTS_DIR: built.artifactsDir, SITE_OUT_DIR: siteDir, ASTRO_TELEMETRY_DISABLED: '1', SITE_WORKS_PER_PAGE: String(PER_PAGE) },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`astro build failed: ${result.stderr}${result.stdout}`);
}, 300_000);

const pageFile = (page: number, format: 'html' | 'md') =>
  page === 1
    ? path.join(siteDir, format === 'html' ? 'works/index.html' : 'works.md')
    : path.join(siteDir, 'works', 'page', format === 'html' ? `${page}/index.html` : `${page}.md`);
const workLinks = (html: string) => [...html.matchAll(/<h3><a href="\/works\/([^/"]+)\/">/g)].map((match) => match[1]!);

describe('the corpus list in pages', () => {
  it('puts every work on exactly one page, the pages in order, 20 a page, and no page beyond the last', () => {
    const pages = Math.ceil(works.length / PER_PAGE);
    expect(pages).toBeGreaterThan(2);
    const seen: string[] = [];
    for (let page = 1; page <= pages; page++) {
      const ids = workLinks(readFileSync(pageFile(page, 'html'), 'utf8'));
      expect(ids.length).toBe(page < pages ? PER_PAGE : works.length - PER_PAGE * (pages - 1));
      seen.push(...ids);
    }
    expect(new Set(seen).size).toBe(works.length);
    expect(seen.sort()).toEqual(works.map((work) => work.id).sort());
    expect(existsSync(pageFile(pages + 1, 'html'))).toBe(false);
    expect(existsSync(path.join(siteDir, 'works', 'page', '1'))).toBe(false); // page 1 is /works/ only
  });

  it('links each page to the next and the previous, and says where it sits', () => {
    const pages = Math.ceil(works.length / PER_PAGE);
    const first = readFileSync(pageFile(1, 'html'), 'utf8');
    expect(first).toContain('rel="next" href="/works/page/2/"');
    expect(first).not.toContain('rel="prev"');
    expect(first).toContain(`Works 1–${PER_PAGE} of ${works.length}, page 1 of ${pages}`);
    const second = readFileSync(pageFile(2, 'html'), 'utf8');
    expect(second).toContain('rel="prev" href="/works/"');
    expect(second).toContain('<link rel="alternate" type="text/markdown" href="/works/page/2.md"');
    const last = readFileSync(pageFile(pages, 'html'), 'utf8');
    expect(last).not.toContain('rel="next"');
    expect(last).toContain(`of ${works.length}, page ${pages} of ${pages}`);
  });

  it('has a Markdown twin per page with the same works and links onward', () => {
    const pages = Math.ceil(works.length / PER_PAGE);
    for (let page = 1; page <= pages; page++) {
      const html = workLinks(readFileSync(pageFile(page, 'html'), 'utf8'));
      const markdown = readFileSync(pageFile(page, 'md'), 'utf8');
      const ids = [...markdown.matchAll(/\]\(\/records\/([^)]+)\.md\)/g)].map((match) => match[1]!);
      expect(ids).toEqual(html);
      if (page < pages) expect(markdown).toContain(`Next page: [/works/page/${page + 1}.md]`);
      if (page > 1) expect(markdown).toContain(`Previous page: [${page === 2 ? '/works.md' : `/works/page/${page - 1}.md`}]`);
    }
  });

  it("sends each ring's link to the page where its works begin", () => {
    const first = readFileSync(pageFile(1, 'html'), 'utf8');
    const links = [...first.matchAll(/<li><a href="([^"]*#ring-([a-z]+))">/g)].map((match) => ({ href: match[1]!, ring: match[2]! }));
    expect(links.length).toBeGreaterThan(1);
    for (const { href, ring } of links) {
      const [page, anchor] = href.split('#');
      const file = page === '' ? pageFile(1, 'html') : path.join(siteDir, page!, 'index.html');
      expect(readFileSync(file, 'utf8')).toContain(`id="${anchor}"`);
      expect(works.some((work) => work.ring === ring)).toBe(true);
    }
  });
});
