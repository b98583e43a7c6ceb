/**
 * The site's tension views in Debian's Chromium, on the demo content: /tensions/ reads in a
 * sensible order, each voice keeps the colour it has on a record page, the filter pages work
 * without JavaScript, one tension's page leads with its two sides, and axe finds nothing serious.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.ts';
import type { Corpus } from '../../api/load-artifacts.ts';
import { trackedTensions } from '../../api/routes/tracked-tensions.ts';
import type { TrackedTension } from '../../core/tension-identity.ts';
import { REPO_ROOT } from '../../core/paths.ts';
import { buildApp } from '../../devkit/app.ts';
import {
  buildSite,
  chromiumAvailable,
  launchBrowser,
  listen,
  screenshot,
  SCREENSHOT_DIR,
  SKIP_MESSAGE,
  watchPage,
  type Listening,
} from '../helpers/browser.ts';

if (!chromiumAvailable) console.warn(SKIP_MESSAGE);

describe.skipIf(!chromiumAvailable)('the tension views', () => {
  let browser: Browser;
  let corpus: Corpus;
  let tensions: TrackedTension[];
  let server: Listening;
  let context: BrowserContext | undefined;
  let page: Page;
  let problems: string[] = [];

  beforeAll(async () => {
    const built = await buildApp(path.join(REPO_ROOT, 'content'));
    corpus = built.corpus;
    tensions = trackedTensions(corpus);
    const siteDir = buildSite(built.artifactsDir);
    server = await listen(createApp({ corpus, siteDir, log: () => {} }));
    browser = await launchBrowser();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  async function open(options: { javaScriptEnabled?: boolean; width?: number } = {}) {
    context = await browser.newContext({
      viewport: { width: options.width ?? 1280, height: 900 },
      javaScriptEnabled: options.javaScriptEnabled ?? true,
      reducedMotion: 'reduce',
    });
    page = await context.newPage();
    problems = watchPage(page, server.origin);
    return page;
  }

  afterEach(async () => {
    await context?.close();
    context = undefined;
    const seen = problems;
    problems = [];
    expect(seen, 'console errors, exceptions or failed requests').toEqual([]);
  });

  /** The tension with a disposition and the most sightings: the one a reader would open first. */
  const featured = () => [...tensions].sort((a, b) => b.dispositions.length - a.dispositions.length || b.sighting_count - a.sighting_count)[0]!;

  it('reads /tensions/ in order: title, filters, open tensions then repaired, each card topic, sides, sightings, disposition', async () => {
    await open();
    await page.goto(`${server.origin}/tensions/`);
    const order = await page.evaluate(() => {
      const main = document.querySelector('main')!;
      const at = (selector: string) => [...main.querySelectorAll('*')].indexOf(main.querySelector(selector)!);
      return { h1: at('h1'), filters: at('nav.filter-panel'), open: at('section#open'), repaired: at('section#repaired') };
    });
    expect(order.h1).toBeGreaterThanOrEqual(0);
    expect(order.h1).toBeLessThan(order.filters);
    expect(order.filters).toBeLessThan(order.open);
    expect(order.open).toBeLessThan(order.repaired);
    const cards = page.locator('li.tension.tracked');
    expect(await cards.count()).toBe(tensions.length);
    const parts = await cards.first().evaluate((card) => [...card.children].map((child) => child.className || child.tagName.toLowerCase()));
    expect(parts.slice(0, 3)).toEqual(['h3', 'versus', 'tension-foot small']);
    expect(parts[3]).toMatch(/disposition/);
    expect(
      await cards
        .first()
        .locator('h3')
        .evaluate((heading) => heading.tagName),
    ).toBe('H3');
    await screenshot(page, 'tensions-1280');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'tensions-1280-first-screen.png') });
    await page.setViewportSize({ width: 375, height: 800 });
    await screenshot(page, 'tensions-375');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'tensions-375-first-screen.png') });
    // The page is no wider than the phone.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
  });

  it('gives each voice the colour it has on its record page, and writes its name beside it', async () => {
    const tension = featured();
    const recordId = tension.sightings.find((sighting) => sighting.record_id)!.record_id!;
    await open();
    const colours = async (selector: string) =>
      Object.fromEntries(
        await Promise.all(
          tension.voices.map(async (voice) => {
            const name = page.locator(`${selector} .side[data-voice="${voice}"] .voice-name`).first();
            expect(await name.textContent()).toBe(voice);
            return [voice, await name.evaluate((element) => getComputedStyle(element).color)];
          }),
        ),
      );
    await page.goto(`${server.origin}/atlas/${recordId}/`);
    const onRecord = await colours('#split');
    // The record's tension card leads to the tension across the Atlas.
    const card = page.locator(`#split li.tension[data-voice-a]`).filter({ has: page.locator(`a.across[href="/tensions/${tension.id}/"]`) });
    expect(await card.count()).toBe(1);
    await page.goto(`${server.origin}/tensions/`);
    expect(await colours(`li[data-key="${tension.id}"]`)).toEqual(onRecord);
    await page.goto(`${server.origin}/tensions/${tension.id}/`);
    expect(await colours('section.tension')).toEqual(onRecord);
    expect(new Set(Object.values(onRecord)).size).toBe(2);
  });

  it('filters by lifecycle and by voice without JavaScript, each page announcing its own JSON twin', async () => {
    await open({ javaScriptEnabled: false });
    await page.goto(`${server.origin}/tensions/`);
    await page.getByRole('navigation', { name: 'Filter tensions' }).getByRole('link', { name: /^Open/ }).click();
    await page.waitForURL(`${server.origin}/tensions/open/`);
    const lifecycles = await page.locator('li.tension.tracked').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.lifecycle));
    expect(lifecycles).toEqual(tensions.filter((tension) => tension.lifecycle === 'open').map(() => 'open'));
    expect(await page.locator('link[rel="alternate"][type="application/json"]').getAttribute('href')).toBe('/tensions/open/index.json');
    const voice = featured().voices[0];
    await page.getByRole('navigation', { name: 'Filter tensions' }).getByRole('link', { name: voice, exact: true }).click();
    await page.waitForURL(/\/tensions\/voice\/[^/]+\/$/);
    const shown = await page.locator('li.tension.tracked').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.voices!.split('|')));
    expect(shown.length).toBe(tensions.filter((tension) => tension.voices.includes(voice)).length);
    for (const voices of shown) expect(voices).toContain(voice);
    const twin = await page.locator('link[rel="alternate"][type="application/json"]').getAttribute('href');
    const response = await page.request.get(`${server.origin}${twin}`);
    expect(response.ok()).toBe(true);
    expect(((await response.json()) as { count: number }).count).toBe(shown.length);
  });

  it('leads one tension’s page with its two sides, then the dispositions, then every sighting', async () => {
    const tension = featured();
    await open();
    await page.goto(`${server.origin}/tensions/${tension.id}/`);
    const headings = await page.locator('main h2').allTextContents();
    expect(headings[0]).toMatch(/^The two sides/);
    expect(headings[1]).toBe('Curator dispositions');
    expect(headings[2]).toMatch(/^Seen in/);
    expect(await page.locator('li.tension.sighting').count()).toBe(tension.sighting_count);
    const api = await page.request.get(`${server.origin}/api/tensions?key=${tension.id}`);
    expect(((await api.json()) as { tensions: TrackedTension[] }).tensions[0]!.sighting_count).toBe(tension.sighting_count);
    await screenshot(page, 'tension-key-1280');
    await page.setViewportSize({ width: 375, height: 800 });
    await screenshot(page, 'tension-key-375');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
  });

  it('has no serious or critical axe violations on /tensions/ and a tension page, at 375 and 1280 px', async () => {
    const axe = readFileSync(path.join(REPO_ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
    for (const width of [375, 1280]) {
      await open({ width });
      for (const pagePath of ['/tensions/', `/tensions/${featured().id}/`, '/tensions/open/']) {
        await page.goto(`${server.origin}${pagePath}`);
        await page.addScriptTag({ content: axe });
        const violations = (await page.evaluate(
          `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id + ': ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')))`,
        )) as string[];
        expect(violations, `${pagePath} at ${width} px`).toEqual([]);
      }
      await context!.close();
      context = undefined;
    }
  });
});
