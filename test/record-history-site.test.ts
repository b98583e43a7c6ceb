/**
 * Issue 45, part 3 on the site: a record page shows its revisions (date, what changed, commit),
 * newest first, and a build without git history says so plainly; the Atlas's and the corpus's
 * pages announce their feeds in <head>. The site is built with `astro build` over the artifacts
 * of test/helpers/history-builds.ts; in Chromium, the history fits at 375 and 1280 px, and
 * screenshots are kept (SHOTS_DIR, default <tmp>/shots45).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { createHashedEmbedder } from '../devkit/hashed-embedder.ts';
import { buildSite, chromiumAvailable, launchBrowser, listen, SKIP_MESSAGE, watchPage } from './helpers/browser.ts';
import { git } from './helpers/git-repo.ts';
import { historyScenario, type HistoryScenario } from './helpers/history-builds.ts';

const SHOTS_DIR = process.env.SHOTS_DIR ?? path.join(os.tmpdir(), 'shots45');

let scenario: HistoryScenario;
let site: string;
let tarballSite: string;

beforeAll(async () => {
  scenario = await historyScenario();
  site = buildSite(scenario.last.artifactsDir);
  tarballSite = buildSite(scenario.tarball.artifactsDir);
}, 600_000);

afterAll(() => scenario?.repo.dispose());

const page = (dir: string, file: string) => new DOMParser().parseFromString(readFileSync(path.join(dir, file), 'utf8'), 'text/html');
const text = (node: { textContent: string | null } | null | undefined) => (node?.textContent ?? '').replace(/\s+/g, ' ').trim();

function historyOf(dir: string, file: string) {
  const document = page(dir, file);
  const section = document.getElementById('history-heading')?.parentNode as unknown as Element | undefined;
  expect(section, file).toBeDefined();
  const items = Array.from(section!.getElementsByTagName('li')).map((item) => text(item));
  const note = Array.from(section!.getElementsByTagName('p')).find((paragraph) => paragraph.getAttribute('class')?.includes('history-note'));
  return { state: section!.getAttribute('data-history'), note: text(note), items };
}

describe('a record page shows its history', () => {
  it('newest first: the date, what changed, the commit and its subject', () => {
    const { commits, repo } = scenario;
    const day = (commit: string) => git(repo.root, 'log', '-1', '--format=%aI', commit).trim().slice(0, 10);
    const d1 = historyOf(site, 'atlas/TST-D1/index.html');
    expect(d1.state).toBe('complete');
    expect(d1.note).toBe(`2 revisions, the latest ${day(commits.tier)}.`);
    expect(d1.items).toEqual([
      `${day(commits.tier)} tier C3 → C1 ${commits.tier.slice(0, 7)} TST-D1: tier C1`,
      `${day(commits.fixture)} added ${commits.fixture.slice(0, 7)} fixture content`,
    ]);
    expect(historyOf(site, 'atlas/TST-D9/index.html').items).toEqual([`${day(commits.added)} added ${commits.added.slice(0, 7)} Add TST-D9 and TST-5`]);
    expect(historyOf(site, 'works/TST-5/index.html').items).toEqual([`${day(commits.added)} added ${commits.added.slice(0, 7)} Add TST-D9 and TST-5`]);
  });

  it('a build without git history says so plainly, on the Atlas record and on the work', () => {
    for (const file of ['atlas/TST-D1/index.html', 'works/TST-1/index.html']) {
      const history = historyOf(tarballSite, file);
      expect(history.state, file).toBe('unavailable');
      expect(history.note, file).toMatch(/^History unavailable: the content folder is not in a git repository/);
      expect(history.items, file).toEqual([]);
    }
  });

  it('the Atlas’s and the corpus’s pages announce their feeds; other pages do not', () => {
    const alternates = (file: string) =>
      Array.from(page(site, file).getElementsByTagName('link'))
        .filter((link) => link.getAttribute('rel') === 'alternate' && /atom|feed/.test(link.getAttribute('type') ?? ''))
        .map((link) => [link.getAttribute('type'), link.getAttribute('href')]);
    for (const file of ['atlas/index.html', 'atlas/TST-D1/index.html']) {
      expect(alternates(file), file).toEqual([
        ['application/atom+xml', '/feeds/atlas.atom'],
        ['application/feed+json', '/feeds/atlas.json'],
      ]);
    }
    for (const file of ['works/index.html', 'works/TST-1/index.html']) {
      expect(alternates(file), file).toEqual([
        ['application/atom+xml', '/feeds/works.atom'],
        ['application/feed+json', '/feeds/works.json'],
      ]);
    }
    expect(alternates('index.html')).toEqual([]);
  });

  if (!chromiumAvailable) console.warn(SKIP_MESSAGE);
  it.skipIf(!chromiumAvailable)(
    'in Chromium at 375 and 1280 px: the history fits its column, its links answer, and screenshots are kept',
    async () => {
      const embedder = createHashedEmbedder();
      const corpus = await loadCorpus(scenario.last.artifactsDir, embedder);
      const server = await listen(createApp({ corpus, log: () => {}, siteDir: site }));
      const browser = await launchBrowser();
      mkdirSync(SHOTS_DIR, { recursive: true });
      try {
        for (const [width, kind, url] of [375, 1280].flatMap((size) => [
          [size, 'record', '/atlas/TST-D1/'] as const,
          [size, 'work', '/works/TST-5/'] as const,
        ])) {
          const tab = await browser.newPage({ viewport: { width, height: 900 } });
          const problems = watchPage(tab, server.origin);
          await tab.goto(`${server.origin}${url}`);
          const section = tab.locator('section.record-history');
          await section.scrollIntoViewIfNeeded();
          // Nothing in the section is wider than the section, and the page does not scroll sideways.
          const overflow = await section.evaluate((element) => {
            const box = element.getBoundingClientRect();
            return [...element.querySelectorAll('*')].filter((child) => child.getBoundingClientRect().right > box.right + 1).length;
          });
          expect(overflow, `${width} px`).toBe(0);
          expect(await tab.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
          await section.screenshot({ path: path.join(SHOTS_DIR, `${kind}-history-${width}.png`) });
          await tab.screenshot({ path: path.join(SHOTS_DIR, `${kind}-page-${width}.png`), fullPage: true });
          for (const href of ['/feeds/atlas.atom', '/feeds/atlas.json', '/changes/index.json']) {
            expect((await tab.request.get(`${server.origin}${href}`)).status(), href).toBe(200);
          }
          expect(problems).toEqual([]);
          await tab.close();
        }
      } finally {
        await browser.close();
        await server.close();
      }
    },
    120_000,
  );
});
