/**
 * The people's site in a real browser (issue #6): Debian's Chromium driven by playwright-core
 * against the running app, which serves the Astro build of the demo content beside the API.
 * A live panel is wired to the local fake OpenAI-compatible server, so "deliberate" and a
 * persisted council run end to end without any real provider.
 *
 * Screenshots of the main pages at 375 px and 1280 px land in test-output/screenshots/.
 */
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.ts';
import { createLiveService } from '../../api/live/service.ts';
import type { Corpus } from '../../api/load-artifacts.ts';
import { createPanel } from '../../providers/chat.ts';
import { createSqliteStore } from '../../storage/sqlite-store.ts';
import { REPO_ROOT } from '../../core/paths.ts';
import { buildApp } from '../../devkit/app.ts';
import { buildSite, chromiumAvailable, launchBrowser, listen, lowContrast, screenshot, SKIP_MESSAGE, watchPage, type Listening } from '../helpers/browser.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../devkit/fake-openai.ts';
import { DEFAULT_SYNTHESIS, INGEST_SECRET, scriptDefaults, testPanelConfig } from '../../devkit/live.ts';
import { groupByQuestion } from '../../src/lib/atlas-groups.ts';
import type { DivergenceFull } from '../../core/records.ts';
import { tensionKey } from '../../core/tension-identity.ts';

if (!chromiumAvailable) console.warn(SKIP_MESSAGE);

const WIDTHS = [375, 1280] as const;

describe.skipIf(!chromiumAvailable)('the site in Chromium', () => {
  let browser: Browser;
  let fake: FakeOpenAI;
  let corpus: Corpus;
  /** The app with a live panel (deliberation offered). */
  let live: Listening;
  /** The same site without a panel (fast path only). */
  let plain: Listening;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  const started = Date.now();

  beforeAll(async () => {
    const built = await buildApp(path.join(REPO_ROOT, 'content'));
    corpus = built.corpus;
    const siteDir = buildSite(built.artifactsDir);
    fake = await startFakeOpenAI();
    scriptDefaults(fake);
    const store = createSqliteStore(':memory:');
    const { panel } = createPanel(testPanelConfig(fake, { defaults: { timeout_ms: 15_000, max_retries: 0, max_tokens: 400 } }), {});
    if (!panel) throw new Error('the test panel did not wire');
    const service = createLiveService({ corpus, panel, store });
    live = await listen(createApp({ corpus, siteDir, live: service, store, ingestSecret: INGEST_SECRET, log: () => {} }));
    plain = await listen(createApp({ corpus, siteDir, log: () => {} }));
    browser = await launchBrowser();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await live?.close();
    await plain?.close();
    await fake?.close();
    console.info(`[e2e] browser suite ran in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  async function open(origin: string, options: { javaScriptEnabled?: boolean; width?: number; colorScheme?: 'light' | 'dark' } = {}) {
    context = await browser.newContext({
      viewport: { width: options.width ?? 1280, height: 900 },
      javaScriptEnabled: options.javaScriptEnabled ?? true,
      colorScheme: options.colorScheme ?? 'light',
      reducedMotion: 'reduce',
    });
    page = await context.newPage();
    problems = watchPage(page, origin);
    return page;
  }

  afterEach(async () => {
    await context?.close();
    expect(problems, 'console errors, exceptions or failed requests').toEqual([]);
  });

  const visibleIds = (p: Page) => p.locator('#atlas-list > li[data-id]:visible').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.id!));
  /** The Atlas lists one entry per question (its newest record's id); an entry shows when one of its records matches. */
  const ids = (records: DivergenceFull[]) => {
    const wanted = new Set(records.map((record) => record.id));
    return groupByQuestion(corpus.divergences)
      .filter((entry) => entry.members.some((record) => wanted.has(record.id)))
      .map((entry) => entry.latest.id);
  };

  it('filters the Atlas in place by tier, freshness and search', async () => {
    const all = corpus.divergences;
    await open(live.origin);
    await page.goto(`${live.origin}/atlas/`);
    expect(await visibleIds(page)).toEqual(ids(all));

    const tiers = page.getByRole('navigation', { name: 'Filter by certification tier' });
    await tiers.getByRole('link', { name: 'C3', exact: true }).click();
    await expect.poll(() => page.url()).toBe(`${live.origin}/atlas/tier/C3/`);
    const c3 = all.filter((record) => record.certification.tier === 'C3');
    expect(c3.length).toBeGreaterThan(0);
    expect(await visibleIds(page)).toEqual(ids(c3));
    await expect.poll(() => page.locator('#atlas-status').textContent()).toContain(`Showing ${ids(c3).length} question`);

    await page.getByRole('navigation', { name: 'Filter by freshness' }).getByRole('link', { name: 'Stale' }).click();
    await expect.poll(() => page.url()).toBe(`${live.origin}/atlas/tier/C3/stale/`);
    expect(await visibleIds(page)).toEqual(ids(c3.filter((record) => record.freshness.stale)));
    // The other links now point at the combined pages, so they work when opened on their own.
    expect(await tiers.getByRole('link', { name: 'C1', exact: true }).getAttribute('href')).toBe('/atlas/tier/C1/stale/');

    await page.goBack();
    await expect.poll(() => page.url()).toBe(`${live.origin}/atlas/tier/C3/`);
    expect(await visibleIds(page)).toEqual(ids(c3));

    await tiers.getByRole('link', { name: 'All tiers' }).click();
    const term = 'sycophancy';
    const api = (await (await fetch(`${live.origin}/api/divergences?search=${term}`)).json()) as { records: { id: string }[] };
    expect(api.records.length).toBeGreaterThan(0);
    expect(api.records.length).toBeLessThan(all.length);
    await page.getByLabel('Search the Atlas').fill(term);
    await page.getByLabel('Search the Atlas').press('Enter');
    await expect.poll(() => visibleIds(page)).toEqual(ids(all.filter((record) => api.records.some((hit) => hit.id === record.id))));
    expect(page.url()).toBe(`${live.origin}/atlas/?search=${term}`);
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => visibleIds(page)).toEqual(ids(all));
    await screenshot(page, 'atlas-filtered-1280');
  });

  it('filters the Atlas without JavaScript through static pages', async () => {
    const all = corpus.divergences;
    await open(live.origin, { javaScriptEnabled: false });
    await page.goto(`${live.origin}/atlas/stale/`);
    expect(await visibleIds(page)).toEqual(ids(all.filter((record) => record.freshness.stale)));
    await page.getByRole('navigation', { name: 'Filter by certification tier' }).getByRole('link', { name: 'C1', exact: true }).click();
    expect(page.url()).toBe(`${live.origin}/atlas/tier/C1/stale/`);
    expect(await visibleIds(page)).toEqual(ids(all.filter((record) => record.freshness.stale && record.certification.tier === 'C1')));
    await page.getByRole('navigation', { name: 'Filter by freshness' }).getByRole('link', { name: 'Current models' }).click();
    expect(page.url()).toBe(`${live.origin}/atlas/tier/C1/current/`);
    expect(await visibleIds(page)).toEqual(ids(all.filter((record) => !record.freshness.stale && record.certification.tier === 'C1')));
    // Search without JavaScript is the API's own search, answered as JSON.
    await page.getByLabel('Search the Atlas').fill('refusal');
    await page.getByLabel('Search the Atlas').press('Enter');
    await page.waitForURL(/\/api\/divergences\?search=refusal$/);
    const body = JSON.parse((await page.locator('body').textContent()) ?? '{}') as { count: number };
    expect(body.count).toBeGreaterThan(0);
  });

  it('shows a record with every voice and tension, its twins, and re-elicitation links both ways', async () => {
    const record = corpus.divergences
      .filter((candidate) => candidate.re_elicits && candidate.tensions.length > 0)
      .sort((a, b) => b.tensions.length - a.tensions.length || b.answers.length - a.answers.length)[0]!;
    await open(live.origin);
    await page.goto(`${live.origin}/atlas/`);
    await page.getByRole('link', { name: record.question }).first().click();
    await page.waitForURL(`${live.origin}/atlas/${record.id}/`);
    expect(await page.locator('h1').textContent()).toBe(record.question);

    const answers = page.locator('article.answer');
    expect(await answers.count()).toBe(record.answers.length);
    for (const [index, answer] of record.answers.entries()) {
      const card = answers.nth(index);
      expect(await card.locator('h3').textContent()).toBe(answer.model);
      expect(await card.locator('code').first().textContent()).toBe(answer.model_id);
      expect(await card.locator('pre.verbatim').evaluate((pre) => pre.textContent)).toBe(answer.text);
      expect(await card.isVisible()).toBe(true);
    }
    // Side by side on a wide screen: the first two answers share a row.
    const [first, second] = [await answers.nth(0).boundingBox(), await answers.nth(1).boundingBox()];
    expect(Math.abs(first!.y - second!.y)).toBeLessThan(2);
    expect(second!.x).toBeGreaterThan(first!.x);

    for (const tension of record.tensions) {
      const item = page.locator(`li[id="${tension.id}"]`);
      await expect.poll(() => item.isVisible()).toBe(true);
      const text = (await item.textContent()) ?? '';
      for (const part of [tension.topic, tension.voice_a, tension.claim_a, tension.voice_b, tension.claim_b, tension.status]) expect(text).toContain(part);
    }
    expect(await page.locator('.tension-map .pair').count()).toBe(record.tension_map.pairs.length);

    for (const type of ['application/json', 'text/markdown']) {
      const href = await page.locator(`link[rel="alternate"][type="${type}"]`).getAttribute('href');
      expect(href).toBeTruthy();
      const twin = await fetch(new URL(href!, live.origin));
      expect(twin.status, href!).toBe(200);
      expect(await twin.text()).toContain(record.id);
    }
    await screenshot(page, 'record-1280');

    await page.getByRole('link', { name: record.re_elicits!, exact: true }).click();
    await page.waitForURL(`${live.origin}/atlas/${record.re_elicits}/`);
    await page.getByRole('link', { name: record.id, exact: true }).click();
    await page.waitForURL(`${live.origin}/atlas/${record.id}/`);
  });

  it('plays a track and counts the play once per page view', async () => {
    const track = corpus.audio.tracks.find((candidate) => candidate.stream_url)!;
    const plays = async () =>
      ((await (await fetch(`${live.origin}/api/play`)).json()) as { tracks: { slug: string; plays: number }[] }).tracks.find(
        (entry) => entry.slug === track.slug,
      )!.plays;
    expect(await plays()).toBe(0);
    await open(live.origin);
    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/api/play')) posts.push(request.postData() ?? '');
    });
    await page.goto(`${live.origin}/listen/`);
    const player = page.locator(`audio[data-slug="${track.slug}"]`);
    const box = (await player.boundingBox())!;
    // The native play button sits at the left end of the control bar.
    await page.mouse.click(box.x + 20, box.y + box.height / 2);
    await expect.poll(() => player.evaluate((audio: HTMLAudioElement) => !audio.paused && audio.currentTime > 0), { timeout: 10_000 }).toBe(true);
    await expect.poll(plays, { timeout: 10_000 }).toBe(1);
    await player.evaluate((audio: HTMLAudioElement) => audio.pause());
    await player.evaluate((audio: HTMLAudioElement) => audio.play());
    await page.waitForTimeout(300);
    await player.evaluate((audio: HTMLAudioElement) => audio.pause());
    expect(posts).toEqual([JSON.stringify({ slug: track.slug })]);

    await page.getByText('Transcript (draft)').first().click();
    expect(await page.locator('pre.transcript').first().isVisible()).toBe(true);
  });

  it('seeks ahead in a track: the player asks for byte ranges and the server answers 206', async () => {
    const track = corpus.audio.tracks.find((candidate) => candidate.stream_url)!;
    await open(live.origin);
    const statuses: number[] = [];
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === track.stream_url) statuses.push(response.status());
    });
    await page.goto(`${live.origin}/listen/`);
    const player = page.locator(`audio[data-slug="${track.slug}"]`);
    await player.evaluate((audio: HTMLAudioElement) => {
      audio.muted = true;
      audio.preload = 'auto';
      audio.load();
    });
    await expect
      .poll(() => player.evaluate((audio: HTMLAudioElement) => audio.readyState >= 1 && Number.isFinite(audio.duration)), { timeout: 10_000 })
      .toBe(true);
    const target = await player.evaluate(async (audio: HTMLAudioElement) => {
      const to = Math.max(0, audio.duration - 2);
      const seeked = new Promise((resolve) => audio.addEventListener('seeked', resolve, { once: true }));
      audio.currentTime = to;
      await seeked;
      await audio.play();
      return to;
    });
    await expect.poll(() => player.evaluate((audio: HTMLAudioElement) => audio.currentTime), { timeout: 10_000 }).toBeGreaterThan(target);
    expect(
      await player.evaluate(
        (audio: HTMLAudioElement) => audio.seekable.length > 0 && audio.seekable.start(0) === 0 && audio.seekable.end(0) >= audio.duration - 0.1,
      ),
    ).toBe(true);
    await player.evaluate((audio: HTMLAudioElement) => audio.pause());
    expect(statuses.length).toBeGreaterThan(0);
    expect(
      statuses.every((status) => status === 206),
      `media responses: ${statuses.join(', ')}`,
    ).toBe(true);
  });

  it('runs a fast-path question on the ask page and shows records, with no deliberation offered without a panel', async () => {
    await open(plain.origin);
    await page.goto(`${plain.origin}/ask/`);
    const question = corpus.divergences[0]!.question;
    await page.getByLabel('Your question').fill(question);
    await page.getByRole('button', { name: 'Ask' }).click();
    const records = page.locator('#ask-records > li');
    await expect.poll(() => records.count(), { timeout: 15_000 }).toBeGreaterThan(0);
    expect(await page.getByRole('heading', { name: 'Receipt' }).isVisible()).toBe(true);
    expect(page.url()).toBe(`${plain.origin}/ask/?q=${encodeURIComponent(question)}`);
    expect(await page.getByRole('button', { name: 'Deliberate' }).isHidden()).toBe(true);
    await screenshot(page, 'ask-1280');
    const href = (await records.first().locator('a').first().getAttribute('href'))!;
    expect(href).toMatch(/^\/(atlas|works)\/[^/]+\/$/);
    await records.first().locator('a').first().click();
    await page.waitForURL(`${plain.origin}${href}`);
  });

  it('deliberates when the panel is wired: streams each voice as it arrives, then shows answer, tensions and sources', async () => {
    fake.reset();
    scriptDefaults(fake);
    // One slow voice: the two others are on the page while it is still thinking.
    fake.script('alder-live', [{ kind: 'answer', content: 'Alder answers slowly.', delayMs: 4_000 }]);
    await open(live.origin);
    const requests: { method: string; url: string; accept: string | undefined }[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/query')) requests.push({ method: request.method(), url: request.url(), accept: request.headers().accept });
    });
    await page.goto(`${live.origin}/ask/`);
    const deliberate = page.getByRole('button', { name: 'Deliberate' });
    await expect.poll(() => deliberate.isVisible()).toBe(true);
    await page.getByLabel('Your question').fill('Can a refusal be owned?');
    await deliberate.click();
    const arrived = page.locator('#delib-voices [data-voice]');
    await expect.poll(() => arrived.count(), { timeout: 8_000 }).toBe(2);
    expect(await page.locator('#delib-answer').count()).toBe(0);
    expect((await arrived.allTextContents()).join(' ')).toMatch(/Birch answers/);
    expect(await page.locator('#delib-voices [data-voice="Alder"]').count()).toBe(0);
    expect(await page.locator('#delib-status').textContent()).toMatch(/2 voice\(s\) answered so far/);
    await screenshot(page, 'ask-voices-arriving-1280');
    await expect.poll(() => page.locator('#delib-answer').textContent(), { timeout: 20_000 }).toBe(DEFAULT_SYNTHESIS.answer);
    const tensions = page.locator('#delib-tensions > li');
    expect(await tensions.count()).toBe(DEFAULT_SYNTHESIS.tensions.length);
    expect(await tensions.first().textContent()).toContain(DEFAULT_SYNTHESIS.tensions[0]!.claim_b);
    expect(await page.locator('#delib-sources a').count()).toBeGreaterThan(0);
    expect(await page.locator('.answers [data-voice="Alder"] pre').textContent()).toBe('Alder answers slowly.');
    const streamed = requests.filter((entry) => entry.method === 'POST');
    expect(streamed).toHaveLength(1);
    expect(streamed[0]!.accept).toBe('text/event-stream');
    expect(requests.filter((entry) => /[?&](async|job)=/.test(entry.url))).toHaveLength(0);
    await screenshot(page, 'ask-deliberation-1280');
  });

  it('shows a failed deliberation as an alert, with the fast-path records still standing', async () => {
    await open(live.origin);
    // The stream is scripted at the HTTP boundary: one voice, then the error event.
    const events = [
      `event: stage\ndata: ${JSON.stringify({ stage: 'voice', name: 'Birch', model_id: 'birch-live', status: 'failed', failure: 'timeout', message: 'timed out' })}\n\n`,
      `event: error\ndata: ${JSON.stringify({ status: 502, error: { code: 'PROVIDER_FAILED', message: 'every panel model timed out' } })}\n\n`,
    ].join('');
    await page.route(
      (url) => url.pathname === '/api/query',
      (route) => (route.request().method() === 'POST' ? route.fulfill({ status: 200, contentType: 'text/event-stream', body: events }) : route.fallback()),
    );
    await page.goto(`${live.origin}/ask/`);
    const deliberate = page.getByRole('button', { name: 'Deliberate' });
    await expect.poll(() => deliberate.isVisible()).toBe(true);
    await page.getByLabel('Your question').fill(corpus.divergences[0]!.question);
    await deliberate.click();
    await expect.poll(() => page.locator('#delib-error').textContent(), { timeout: 8_000 }).toContain('The deliberation failed: every panel model timed out');
    await expect.poll(() => page.locator('#ask-records > li').count(), { timeout: 15_000 }).toBeGreaterThan(0);
    expect(await deliberate.isEnabled()).toBe(true);
  });

  it('is operable by keyboard: skip link, visible focus, filters', async () => {
    await open(live.origin);
    await page.goto(`${live.origin}/atlas/`);
    await page.keyboard.press('Tab');
    const skip = page.locator(':focus');
    expect(await skip.textContent()).toBe('Skip to content');
    const box = (await skip.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(await skip.evaluate((element) => getComputedStyle(element).outlineStyle)).not.toBe('none');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');

    // Tab forward to the C2 tier filter and choose it with Enter.
    let found = false;
    for (let i = 0; i < 80 && !found; i++) {
      await page.keyboard.press('Tab');
      found = (await page.evaluate(() => document.activeElement?.textContent)) === 'C2';
    }
    expect(found).toBe(true);
    expect(await page.locator(':focus').evaluate((element) => getComputedStyle(element).outlineStyle)).toBe('solid');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.url()).toBe(`${live.origin}/atlas/tier/C2/`);
    expect(await visibleIds(page)).toEqual(ids(corpus.divergences.filter((record) => record.certification.tier === 'C2')));
    // Search field reachable and usable by keyboard.
    await page.getByLabel('Search the Atlas').focus();
    await page.keyboard.type('zzzz-no-such-word');
    await page.keyboard.press('Enter');
    await expect.poll(() => visibleIds(page)).toEqual([]);
    await expect.poll(() => page.locator('#atlas-status').textContent()).toContain('No question matches');
  });

  describe('every main page, at 375 px and 1280 px', () => {
    const record = () => corpus.divergences.find((candidate) => candidate.tensions.length > 0 && candidate.freshness.stale)!;
    const pages = () => [
      { name: 'home', path: '/' },
      { name: 'atlas', path: '/atlas/' },
      { name: 'record', path: `/atlas/${record().id}/` },
      { name: 'tensions', path: '/tensions/' },
      { name: 'tension', path: `/tensions/${tensionKey(record().tensions[0]!.voice_a, record().tensions[0]!.voice_b, record().tensions[0]!.topic)}/` },
      { name: 'ask', path: '/ask/' },
      { name: 'graph', path: '/graph/' },
      { name: 'listen', path: '/listen/' },
      { name: 'works', path: '/works/' },
      { name: 'work', path: `/works/${corpus.works[0]!.id}/` },
      { name: 'contributors', path: '/contributors/' },
      { name: 'limitations', path: '/docs/limitations/' },
    ];

    for (const width of WIDTHS) {
      it(`has landmarks, one h1, labelled controls, twins, no overflow, enough contrast and little JavaScript (${width} px)`, async () => {
        await open(live.origin, { width });
        for (const { name, path: pagePath } of pages()) {
          const response = await page.goto(`${live.origin}${pagePath}`);
          expect(response?.status(), pagePath).toBe(200);
          await page.waitForLoadState('networkidle');
          expect(await page.locator('h1').count(), pagePath).toBe(1);
          for (const role of ['banner', 'main', 'contentinfo'] as const) expect(await page.getByRole(role).count(), `${pagePath} ${role}`).toBe(1);
          expect(await page.getByRole('navigation', { name: 'Main' }).count(), pagePath).toBe(1);
          const unlabelled = await page
            .locator('input:not([type="hidden"]), select, textarea')
            .evaluateAll((controls) =>
              controls
                .filter((control) => !(control as HTMLInputElement).labels?.length && !control.getAttribute('aria-label'))
                .map((control) => control.id || control.outerHTML),
            );
          expect(unlabelled, pagePath).toEqual([]);
          for (const type of ['application/json', 'text/markdown']) {
            const href = await page.locator(`link[rel="alternate"][type="${type}"]`).getAttribute('href');
            expect(await page.locator(`footer a[href="${href}"]`).count(), `${pagePath} footer links ${href}`).toBeGreaterThan(0);
            expect((await fetch(new URL(href!, live.origin))).status, `${pagePath} twin ${href}`).toBe(200);
          }
          expect(await page.locator('a[href="/llms.txt"]').count(), pagePath).toBeGreaterThan(0);
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          expect(overflow, `${pagePath} scrolls sideways at ${width} px`).toBeLessThanOrEqual(0);
          expect(await lowContrast(page), `${pagePath} contrast`).toEqual([]);
          const scriptBytes = await page.evaluate(() =>
            [...document.scripts].reduce((sum, script) => sum + (script.src ? 0 : new Blob([script.textContent ?? '']).size), 0),
          );
          const externalScripts = await page.evaluate(() =>
            performance
              .getEntriesByType('resource')
              .filter((entry) => (entry as PerformanceResourceTiming).initiatorType === 'script')
              .reduce((sum, entry) => sum + (entry as PerformanceResourceTiming).transferSize, 0),
          );
          expect(scriptBytes + externalScripts, `${pagePath} JavaScript bytes`).toBeLessThan(200 * 1024);
          await screenshot(page, `${name}-${width}`);
        }
      });
    }

    it('keeps contrast in the dark colour scheme', async () => {
      await open(live.origin, { colorScheme: 'dark' });
      for (const { name, path: pagePath } of pages()) {
        await page.goto(`${live.origin}${pagePath}`);
        await page.waitForLoadState('networkidle');
        expect(await lowContrast(page), `${pagePath} contrast (dark)`).toEqual([]);
        if (['home', 'atlas', 'record'].includes(name)) await screenshot(page, `${name}-dark-1280`);
      }
    });
  });

  it('refreshes the home counts from /api/manifest: a council persisted at run time is counted, and listed in the Atlas', async () => {
    const before = corpus.manifest.counts.atlas.live_records;
    const response = await fetch(`${live.origin}/api/council`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${INGEST_SECRET}` },
      body: JSON.stringify({ q: 'Is a persisted council counted on the home page?', persist: true }),
    });
    expect(response.status).toBe(201);
    const { persisted } = (await response.json()) as { persisted: { id: string } };

    await open(live.origin);
    await page.goto(`${live.origin}/`);
    const count = page.locator('dd[data-count="atlas.live_records"]');
    await expect.poll(() => count.textContent()).toBe(String(before + 1));
    expect(await page.locator('#counts-live').textContent()).toContain('refreshed');
    // The static HTML itself still says what the build counted.
    expect(await (await fetch(`${live.origin}/`)).text()).toContain(`<dd data-count="atlas.live_records">${before}</dd>`);

    await page.goto(`${live.origin}/atlas/`);
    const added = page.locator(`#atlas-list > li[data-id="${persisted.id}"]`);
    await expect.poll(() => added.isVisible()).toBe(true);
    expect(await added.locator('a').getAttribute('href')).toBe(`/api/divergences?id=${persisted.id}`);
  });
});
