/**
 * The site as a reading product (issue 16), in Debian's Chromium: the record page leads with the
 * split, one colour per voice across pages, a tension map labelled by topic, the Atlas as one
 * entry per question with filters that work without JavaScript, a phone's first screen, the
 * reading face served by the deployment itself, concept pages, and per-record card metadata.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.ts';
import type { Corpus } from '../../api/load-artifacts.ts';
import type { DivergenceFull } from '../../core/records.ts';
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

describe.skipIf(!chromiumAvailable)('the site as a reading product', () => {
  let browser: Browser;
  let corpus: Corpus;
  let server: Listening;
  let context: BrowserContext | undefined;
  let page: Page;
  let problems: string[] = [];
  /** Requests the pages made to any origin but the deployment's own. */
  let foreign: string[] = [];

  beforeAll(async () => {
    const built = await buildApp(path.join(REPO_ROOT, 'content'));
    corpus = built.corpus;
    const siteDir = buildSite(built.artifactsDir);
    server = await listen(createApp({ corpus, siteDir, log: () => {} }));
    browser = await launchBrowser();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  async function open(options: { javaScriptEnabled?: boolean; width?: number; colorScheme?: 'light' | 'dark' } = {}) {
    context = await browser.newContext({
      viewport: { width: options.width ?? 1280, height: 900 },
      javaScriptEnabled: options.javaScriptEnabled ?? true,
      colorScheme: options.colorScheme ?? 'light',
      reducedMotion: 'reduce',
    });
    page = await context.newPage();
    problems = watchPage(page, server.origin);
    foreign = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(server.origin) && !request.url().startsWith('data:')) foreign.push(request.url());
    });
    return page;
  }

  afterEach(async () => {
    await context?.close();
    context = undefined;
    const [seen, elsewhere] = [problems, foreign];
    problems = [];
    foreign = [];
    expect(seen, 'console errors, exceptions or failed requests').toEqual([]);
    expect(elsewhere, 'requests to other origins').toEqual([]);
  });

  /** The record with the most tensions whose tensions name voices that answered. */
  const richRecord = (): DivergenceFull =>
    [...corpus.divergences]
      .filter(
        (record) =>
          record.tensions.length >= 2 &&
          record.tensions.every((t) => record.answers.some((a) => a.model === t.voice_a) && record.answers.some((a) => a.model === t.voice_b)),
      )
      .sort((a, b) => b.tensions.length - a.tensions.length || b.answers.length - a.answers.length)[0]!;
  const colourOf = (p: Page, selector: string) =>
    p
      .locator(selector)
      .first()
      .evaluate((element) => getComputedStyle(element).color);

  it('leads a record with where the voices split, then the synthesis, then the answers; facts and twins in a side panel', async () => {
    const record = richRecord();
    await open();
    await page.goto(`${server.origin}/atlas/${record.id}/`);
    const order = await page.evaluate(() => {
      const at = (selector: string) => {
        const node = document.querySelector(selector);
        if (!node) return -1;
        return [...document.querySelectorAll('*')].indexOf(node);
      };
      return {
        h1: at('h1'),
        split: at('#split-heading'),
        synthesis: at('#synthesis-heading'),
        answers: at('#answers-heading'),
        aside: at('aside.record-aside'),
        twins: at('aside.record-aside ul.twins'),
      };
    });
    expect(order.h1).toBeGreaterThan(-1);
    expect(order.split).toBeGreaterThan(order.h1);
    expect(order.synthesis).toBeGreaterThan(order.split);
    expect(order.answers).toBeGreaterThan(order.synthesis);
    expect(order.twins).toBeGreaterThan(order.aside);
    // Nothing but the breadcrumb and one line of facts between the question and the split.
    const between = await page.evaluate(() => {
      const h1 = document.querySelector('h1')!;
      const split = document.getElementById('split-heading')!;
      return h1.getBoundingClientRect().bottom - 0 < split.getBoundingClientRect().top
        ? split.getBoundingClientRect().top - h1.getBoundingClientRect().bottom
        : -1;
    });
    expect(between).toBeGreaterThan(0);
    expect(between).toBeLessThan(150);
    // Each tension: its topic, both voices and both claims, side by side at 1280 px.
    const cards = page.locator('#split li.tension');
    expect(await cards.count()).toBe(record.tensions.length);
    for (const [index, tension] of record.tensions.entries()) {
      const card = cards.nth(index);
      expect(await card.locator('h3').textContent()).toBe(tension.topic);
      const sides = card.locator('.side');
      expect(await sides.nth(0).textContent()).toContain(tension.claim_a);
      expect(await sides.nth(1).textContent()).toContain(tension.claim_b);
      expect(await sides.nth(0).locator('.voice-name').textContent()).toBe(tension.voice_a);
      expect(await sides.nth(1).locator('.voice-name').textContent()).toBe(tension.voice_b);
      const [a, b] = [await sides.nth(0).boundingBox(), await sides.nth(1).boundingBox()];
      expect(Math.abs(a!.y - b!.y)).toBeLessThan(2);
    }
    // The synthesis starts within the first two screens, not 4,000 px down.
    const synthesisTop = await page.locator('#synthesis-heading').evaluate((h) => h.getBoundingClientRect().top + window.scrollY);
    expect(synthesisTop).toBeLessThan(1800);
    // Answers stay verbatim.
    for (const [index, answer] of record.answers.entries()) {
      expect(await page.locator(`#answer-${index} pre.verbatim`).evaluate((pre) => pre.textContent)).toBe(answer.text);
    }
    await screenshot(page, 'reading-record-1280');
  });

  it('gives each voice one colour: tension cards, answer headers, the tension map and other pages agree; names always written', async () => {
    const record = richRecord();
    await open();
    await page.goto(`${server.origin}/atlas/${record.id}/`);
    const voices = [...new Set(record.answers.map((answer) => answer.model))];
    const colours = new Map<string, string>();
    for (const voice of voices) {
      const header = await colourOf(page, `article.answer[data-voice="${voice}"] .voice-name`);
      colours.set(voice, header);
      expect(await page.locator(`article.answer[data-voice="${voice}"] .voice-name`).first().textContent()).toBe(voice);
      const sides = page.locator(`#split .side[data-voice="${voice}"] .voice-name`);
      for (let i = 0; i < (await sides.count()); i++)
        expect(await sides.nth(i).evaluate((element) => getComputedStyle(element).color), `${voice} side ${i}`).toBe(header);
      const dot = page.locator(`.tension-map .voice-node[data-voice="${voice}"] circle`);
      if ((await dot.count()) > 0) expect(await dot.evaluate((circle) => getComputedStyle(circle).fill), `${voice} map dot`).toBe(header);
    }
    // Different voices, different colours.
    expect(new Set(colours.values()).size).toBe(voices.length);
    // The same voice on another record keeps its colour (not the side it happens to sit on).
    const [voice] = voices;
    const other = corpus.divergences.find((candidate) => candidate.id !== record.id && candidate.tensions.some((t) => t.voice_b === voice))!;
    expect(other).toBeDefined();
    await page.goto(`${server.origin}/atlas/${other.id}/`);
    expect(await colourOf(page, `#split .side[data-voice="${voice}"] .voice-name`)).toBe(colours.get(voice!));
    // And in the Atlas list.
    await page.goto(`${server.origin}/atlas/`);
    const listed = page
      .locator('#atlas-list .voice-name')
      .filter({ hasText: new RegExp(`^${voice}$`) })
      .first();
    expect(await listed.evaluate((element) => getComputedStyle(element).color)).toBe(colours.get(voice!));
  });

  it('labels the tension map with topics, not numbers', async () => {
    const record = richRecord();
    await open();
    await page.goto(`${server.origin}/atlas/${record.id}/`);
    const labels = await page
      .locator('.tension-map text.topic')
      .evaluateAll((texts) => texts.map((text) => [...text.querySelectorAll('tspan')].map((span) => span.textContent).join(' ')));
    expect(labels.sort()).toEqual(record.tensions.map((tension) => tension.topic).sort());
    expect(await page.locator('.tension-map').textContent()).not.toMatch(/\bT\d\b/);
  });

  it('links each tension to the two answers it involves, with and without JavaScript', async () => {
    const record = richRecord();
    const tension = record.tensions[0]!;
    const involved = (p: Page) => p.locator('article.answer.involved').evaluateAll((cards) => cards.map((card) => (card as HTMLElement).dataset.voice).sort());
    await open();
    await page.goto(`${server.origin}/atlas/${record.id}/`);
    expect(await involved(page)).toEqual([]);
    await page.locator(`li[id="${tension.id}"] a.to-answers`).first().click();
    expect(await involved(page)).toEqual([tension.voice_a, tension.voice_b].sort());
    const first = page.locator(`article.answer[data-voice="${tension.voice_a}"]`).first();
    const outline = await first.evaluate((card) => [getComputedStyle(card).outlineStyle, getComputedStyle(card).outlineColor]);
    expect(outline[0]).toBe('solid');
    expect(outline[1]).toBe(await colourOf(page, `article.answer[data-voice="${tension.voice_a}"] .voice-name`));
    expect(
      await first.evaluate((card) => {
        const box = card.getBoundingClientRect();
        return box.top < window.innerHeight && box.bottom > 0;
      }),
    ).toBe(true);
    const bystander = page.locator('article.answer:not(.involved)').first();
    expect(await bystander.evaluate((card) => getComputedStyle(card).outlineStyle)).toBe('none');
    await context!.close();

    await open({ javaScriptEnabled: false });
    await page.goto(`${server.origin}/atlas/${record.id}/`);
    const link = page.locator(`li[id="${tension.id}"] a.to-answers`).nth(1);
    const target = (await link.getAttribute('href'))!;
    await link.click();
    expect(new URL(page.url()).hash).toBe(target);
    expect(await page.locator(target).getAttribute('data-voice')).toBe(tension.voice_b);
    expect(await page.locator(target).evaluate((card) => getComputedStyle(card).outlineStyle)).toBe('solid');
  });

  it('lists one Atlas entry per question, with the dates it was asked and its tension topics', async () => {
    const reasked = corpus.divergences.filter((record) => record.re_elicits);
    expect(reasked.length).toBeGreaterThan(0);
    const questions = new Set(corpus.divergences.map((record) => record.question));
    await open();
    await page.goto(`${server.origin}/atlas/`);
    const titles = await page.locator('#atlas-list > li h2').allTextContents();
    expect(new Set(titles).size).toBe(titles.length);
    expect(titles.length).toBeLessThan(corpus.divergences.length);
    for (const title of titles) expect(questions.has(title)).toBe(true);
    for (const record of reasked) {
      const entry = page.locator(`#atlas-list > li[data-ids~="${record.id}"]`);
      expect(await entry.count()).toBe(1);
      const dates = await entry.locator('ol.asked li').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.record));
      expect(dates).toContain(record.id);
      expect(dates).toContain(record.re_elicits);
      expect(await entry.locator(`ol.asked a[href="/atlas/${record.id}/"]`).count()).toBe(1);
      const latest = corpus.divergences.find((candidate) => candidate.id === (dates.at(-1) as string))!;
      for (const tension of latest.tensions) expect(await entry.locator('.topics').textContent()).toContain(tension.topic);
    }
    await screenshot(page, 'reading-atlas-1280');
  });

  it('filters the Atlas by voice and by theme without JavaScript, each page announcing its own JSON twin', async () => {
    const voice = 'Kestrel';
    await open({ javaScriptEnabled: false });
    await page.goto(`${server.origin}/atlas/`);
    await page.getByRole('navigation', { name: 'Filter by voice' }).getByRole('link', { name: voice }).click();
    expect(page.url()).toBe(`${server.origin}/atlas/voice/kestrel/`);
    const visible = () => page.locator('#atlas-list > li:visible').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.ids!.split(' ')));
    const shown = await visible();
    expect(shown.length).toBeGreaterThan(0);
    const byId = new Map(corpus.divergences.map((record) => [record.id, record]));
    for (const ids of shown) expect(ids.some((id) => byId.get(id)!.contributors.includes(voice))).toBe(true);
    const hidden = await page.locator('#atlas-list > li[hidden]').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.ids!.split(' ')));
    for (const ids of hidden) expect(ids.some((id) => byId.get(id)!.contributors.includes(voice))).toBe(false);
    const twin = (await page.locator('link[rel="alternate"][type="application/json"]').getAttribute('href'))!;
    expect(twin).toBe('/atlas/voice/kestrel/index.json');
    const body = (await (await fetch(new URL(twin, server.origin))).json()) as { count: number; filter: { voice: string } };
    expect(body.filter.voice).toBe(voice);
    expect(body.count).toBe(shown.length);

    const theme = corpus.divergences.find((record) => record.cluster)!.cluster!;
    await page.getByRole('navigation', { name: 'Filter by theme' }).getByRole('link', { name: theme, exact: true }).click();
    expect(page.url()).toBe(`${server.origin}/atlas/theme/${theme}/`);
    for (const ids of await visible()) expect(ids.some((id) => byId.get(id)!.cluster === theme)).toBe(true);
    expect(await page.locator('link[rel="alternate"][type="application/json"]').getAttribute('href')).toBe(`/atlas/theme/${theme}/index.json`);

    await page.goto(`${server.origin}/atlas/tier/C1/stale/`);
    const tierTwin = (await page.locator('link[rel="alternate"][type="application/json"]').getAttribute('href'))!;
    expect(tierTwin).toBe('/atlas/tier/C1/stale/index.json');
    const tierBody = (await (await fetch(new URL(tierTwin, server.origin))).json()) as { count: number };
    expect(tierBody.count).toBe((await visible()).length);
  });

  it('shows every link of the navigation on a phone, without JavaScript, and still starts the title within the first 200 px (issue 29 item 8)', async () => {
    const pages = [
      '/',
      '/atlas/',
      `/atlas/${richRecord().id}/`,
      '/graph/',
      '/tensions/',
      '/works/',
      '/listen/',
      '/ask/',
      '/contributors/',
      '/docs/limitations/',
    ];
    for (const javaScriptEnabled of [false, true]) {
      await open({ width: 375, javaScriptEnabled });
      for (const pagePath of pages) {
        await page.goto(`${server.origin}${pagePath}`);
        // The first screen, as the phone shows it (the full-page screenshots are elsewhere).
        if (pagePath === '/atlas/' && !javaScriptEnabled) await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'navigation-atlas-375.png') });
        const top = await page.locator('h1').evaluate((h1) => h1.getBoundingClientRect().top);
        expect(top, pagePath).toBeLessThan(200);
        // Each link is on screen and is what a tap at its centre reaches (not clipped, not covered).
        const links = await page
          .getByRole('navigation', { name: 'Main' })
          .locator('a')
          .evaluateAll((anchors) =>
            anchors.map((anchor) => {
              const box = anchor.getBoundingClientRect();
              const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
              return {
                href: anchor.getAttribute('href'),
                inside: box.left >= 0 && box.right <= window.innerWidth && box.top >= 0 && box.bottom <= window.innerHeight && box.width > 0,
                reached: hit === anchor || anchor.contains(hit),
              };
            }),
          );
        expect(
          links.map((link) => link.href),
          pagePath,
        ).toEqual(['/', '/atlas/', '/tensions/', '/works/', '/graph/', '/listen/', '/ask/', '/contributors/', '/docs/limitations/']);
        expect(
          links.filter((link) => !link.inside || !link.reached).map((link) => link.href),
          `${pagePath} links off screen or covered`,
        ).toEqual([]);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow, `${pagePath} scrolls sideways`).toBeLessThanOrEqual(0);
      }
      if (!javaScriptEnabled) {
        await page.goto(`${server.origin}/atlas/`);
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Limitations' }).click();
        await page.waitForURL(`${server.origin}/docs/limitations/`);
      }
      await context?.close();
      context = undefined;
    }
    await open({ width: 1280 });
    await page.goto(`${server.origin}/atlas/`);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'navigation-atlas-1280.png') });
    await context?.close();
    await open({ width: 375 });
    // The home page names the demonstration once, not twice.
    await page.goto(`${server.origin}/`);
    expect(await page.locator('.demo-banner').count()).toBe(0);
    expect(
      await page
        .locator('main')
        .getByText(/fictional/i)
        .count(),
    ).toBe(1);
    await screenshot(page, 'reading-home-375');
  });

  it('shows a promise, a featured split side by side and a way into the Atlas on the home page', async () => {
    await open();
    await page.goto(`${server.origin}/`);
    const order = await page.evaluate(() => {
      const all = [...document.querySelectorAll('*')];
      const at = (selector: string) => all.indexOf(document.querySelector(selector)!);
      return {
        promise: at('.promise'),
        featured: at('.featured'),
        counts: at('#counts'),
        clients: all.findIndex((node) => node.tagName === 'H2' && /AI clients/.test(node.textContent ?? '')),
      };
    });
    expect(order.promise).toBeLessThan(order.featured);
    expect(order.featured).toBeLessThan(order.counts);
    expect(order.counts).toBeLessThan(order.clients);
    const sides = page.locator('.featured .side');
    expect(await sides.count()).toBe(2);
    const [a, b] = [await sides.nth(0).boundingBox(), await sides.nth(1).boundingBox()];
    expect(Math.abs(a!.y - b!.y)).toBeLessThan(2);
    expect(await page.locator('.cta a[href="/atlas/"]').isVisible()).toBe(true);
  });

  it('sets text in the reading face served by the deployment itself, at a reading size and measure', async () => {
    await open();
    await page.goto(`${server.origin}/atlas/${richRecord().id}/`);
    await page.evaluate(() => document.fonts.ready);
    expect(await page.evaluate(() => document.fonts.check('16px "Source Serif 4 Variable"'))).toBe(true);
    const fonts = await page.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .map((entry) => entry.name)
        .filter((name) => name.endsWith('.woff2')),
    );
    expect(fonts.length).toBeGreaterThan(0);
    for (const font of fonts) expect(font.startsWith(`${server.origin}/_astro/`), font).toBe(true);
    const answer = page.locator('article.answer pre.verbatim').first();
    const style = await answer.evaluate((pre) => ({
      family: getComputedStyle(pre).fontFamily,
      size: parseFloat(getComputedStyle(pre).fontSize),
      width: pre.getBoundingClientRect().width,
    }));
    expect(style.family).toContain('Source Serif 4');
    expect(style.size).toBeGreaterThanOrEqual(16);
    expect(style.size).toBeLessThanOrEqual(20);
    // At most ~75 characters a line in the synthesis.
    const measure = await page
      .locator('.synthesis .prose p')
      .first()
      .evaluate((p) => p.getBoundingClientRect().width / (parseFloat(getComputedStyle(p).fontSize) * 0.5));
    expect(measure).toBeLessThanOrEqual(80);
  });

  it('gives every concept its own page; the index shows definitions, not essays', async () => {
    const graph = corpus.graph;
    const withWorks = graph.nodes.find((node) => node.definition && corpus.works.some((work) => work.lineage.includes(node.id)))!;
    await open();
    await page.goto(`${server.origin}/graph/`);
    expect(await page.locator('.definitions dt a').count()).toBe(graph.nodes.length);
    expect(await page.locator('.definitions').locator('h3, h4, h5').count()).toBe(0);
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    expect(height).toBeLessThan(6000);
    await page.locator(`.definitions dt a[href="/graph/${withWorks.id}/"]`).click();
    await page.waitForURL(`${server.origin}/graph/${withWorks.id}/`);
    expect(await page.locator('h1').textContent()).toBe(withWorks.label);
    expect(await page.locator('.definition').textContent()).toBe(withWorks.definition);
    const works = corpus.works.filter((work) => work.lineage.includes(withWorks.id));
    expect(await page.locator('#works-heading + ul li').count()).toBe(works.length);
    expect(await page.locator('link[rel="alternate"][type="application/json"]').getAttribute('href')).toBe(`/concepts/${withWorks.id}.json`);
  });

  it('describes a record for a shared link: OpenGraph and Twitter card with the question and voices; a favicon', async () => {
    const record = richRecord();
    const html = await (await fetch(`${server.origin}/atlas/${record.id}/`)).text();
    const meta = (name: string) => new RegExp(`<meta (?:property|name)="${name}" content="([^"]*)"`).exec(html)?.[1];
    const decode = (text: string | undefined) =>
      text
        ?.replace(/&#39;/g, "'")
        .replace(/&quot;/g, '"')
        .replace(/&amp;/g, '&');
    expect(decode(meta('og:title'))).toBe(record.question);
    expect(decode(meta('twitter:title'))).toBe(record.question);
    for (const voice of record.contributors) expect(meta('og:description')).toContain(voice);
    expect(meta('og:type')).toBe('article');
    // A demonstration deployment says so in the card too.
    expect(meta('og:description')).toMatch(/fictional/);
    expect(html).toContain('<link rel="icon" href="/favicon.svg"');
    const icon = await fetch(`${server.origin}/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toContain('image/svg+xml');
  });

  it('shows each track’s exact duration, as its file holds it', async () => {
    const html = await (await fetch(`${server.origin}/listen/`)).text();
    expect(html).toContain('0:22.28');
    expect(html).not.toMatch(/Duration <span data-duration="23">/);
  });

  it('shows the certification evidence a record carries in its side panel', async () => {
    const record = corpus.divergences.find(
      (candidate) => candidate.certification.dri !== undefined && candidate.certification.split_persistence !== undefined,
    )!;
    expect(record).toBeDefined();
    await open();
    await page.goto(`${server.origin}/atlas/${record.id}/`);
    const panel = page.locator('aside.record-aside .cert');
    expect(await panel.getAttribute('data-tier')).toBe(record.certification.tier);
    expect(await panel.locator('[data-cert="dri"]').textContent()).toBe(String(record.certification.dri));
    expect(await panel.locator('[data-cert="split_persistence"]').textContent()).toContain(`${Math.round(record.certification.split_persistence! * 100)} %`);
  });

  it('has no serious or critical axe violations on the reading pages, at 375 and 1280 px, light and dark', async () => {
    const axe = readFileSync(path.join(REPO_ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
    const paths = ['/', '/atlas/', `/atlas/${richRecord().id}/`, '/atlas/voice/kestrel/', '/graph/', `/graph/${corpus.graph.nodes[0]!.id}/`];
    for (const [width, colorScheme] of [
      [375, 'light'],
      [1280, 'light'],
      [1280, 'dark'],
    ] as const) {
      await open({ width, colorScheme });
      for (const pagePath of paths) {
        await page.goto(`${server.origin}${pagePath}`);
        await page.addScriptTag({ content: axe });
        const violations = (await page.evaluate(
          `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id + ': ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')))`,
        )) as string[];
        expect(violations, `${pagePath} at ${width} px, ${colorScheme}`).toEqual([]);
      }
      await context!.close();
    }
  });

  it('keeps each touched page under the JavaScript budget', async () => {
    await open();
    for (const pagePath of ['/', '/atlas/', `/atlas/${richRecord().id}/`, '/graph/', '/atlas/voice/kestrel/']) {
      await page.goto(`${server.origin}${pagePath}`);
      const bytes = await page.evaluate(() => [...document.scripts].reduce((sum, script) => sum + new Blob([script.textContent ?? '']).size, 0));
      expect(bytes, pagePath).toBeLessThan(50 * 1024);
      expect(await page.evaluate(() => [...document.scripts].filter((script) => script.src).length), pagePath).toBe(0);
    }
  });
});
