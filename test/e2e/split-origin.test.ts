/**
 * The static site on any host with the API elsewhere (docs/OPERATIONS.md): the site built with
 * PUBLIC_API_ORIGIN, its output folder (pages plus the files `npm run build` copies from
 * artifacts/public) served by a plain static file server on one port, the API on another. In
 * Chromium: a record page and its twins, and a question on the Ask page answered through the
 * cross-origin API (CORS), with no request of the site's reaching the static server's /api/.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.ts';
import type { Corpus } from '../../api/load-artifacts.ts';
import { buildApp } from '../../devkit/app.ts';
import { writeFixtureContent } from '../../devkit/fixture-content.ts';
import { copySiteFiles } from '../../scripts/site-files.ts';
import { buildSite, chromiumAvailable, launchBrowser, listen, SKIP_MESSAGE, watchPage, type Listening } from '../helpers/browser.ts';

if (!chromiumAvailable) console.warn(SKIP_MESSAGE);

describe.skipIf(!chromiumAvailable)('the built site on a plain static server, the API on another origin', () => {
  let browser: Browser;
  let corpus: Corpus;
  let api: Listening;
  let site: Listening;
  /** Paths the static server was asked for. */
  const served: string[] = [];

  beforeAll(async () => {
    const built = await buildApp(writeFixtureContent());
    corpus = built.corpus;
    api = await listen(createApp({ corpus, log: () => {} }));
    const siteDir = buildSite(built.artifactsDir, { PUBLIC_API_ORIGIN: api.origin });
    copySiteFiles(built.artifactsDir, siteDir);
    // A plain static file server: files and index.html, nothing else.
    const statics = express();
    statics.use((request, _response, next) => {
      served.push(request.path);
      next();
    });
    statics.use(express.static(siteDir, { index: ['index.html'], redirect: true }));
    const server = statics.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    site = { origin, close: () => new Promise((done) => server.close(() => done())) };
    browser = await launchBrowser();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await site?.close();
  });

  /** A page, and what went wrong on it so far (console errors, failed or 4xx/5xx requests to either origin). */
  async function open(): Promise<{ page: Page; problems: () => string[] }> {
    const page = await browser.newPage();
    const onSite = watchPage(page, site.origin);
    const onApi = watchPage(page, api.origin);
    return { page, problems: () => [...new Set([...onSite, ...onApi])] };
  }

  it('serves a record page whose twins are on the static host and whose API twin is on the API origin', async () => {
    const { page, problems } = await open();
    const record = corpus.divergences[0]!;
    const response = await page.goto(`${site.origin}/atlas/${record.id}/`);
    expect(response?.status()).toBe(200);
    const twins = page.getByRole('list', { name: 'Machine-readable twins of this record' });
    expect(await twins.getByRole('link', { name: 'JSON (API)' }).getAttribute('href')).toBe(`${api.origin}/api/divergences?id=${record.id}`);

    await twins.getByRole('link', { name: 'JSON file' }).click();
    await page.waitForURL(`${site.origin}/records/${record.id}.json`);
    expect(JSON.parse((await page.locator('body').textContent())!)).toMatchObject({ id: record.id });
    const markdown = await page.request.get(`${site.origin}/records/${record.id}.md`);
    expect(markdown.status()).toBe(200);
    expect(await markdown.text()).toContain(record.id);
    for (const file of ['/llms.txt', '/limitations.md']) expect((await page.request.get(`${site.origin}${file}`)).status(), file).toBe(200);

    await page.goto(`${site.origin}/atlas/${record.id}/`);
    await twins.getByRole('link', { name: 'JSON (API)' }).click();
    await page.waitForURL(`${api.origin}/api/divergences?id=${record.id}`);
    expect(JSON.parse((await page.locator('body').textContent())!)).toMatchObject({ id: record.id });
    expect(problems()).toEqual([]);
    await page.close();
  });

  it('asks a question on the Ask page through the API on the other origin', async () => {
    const { page, problems } = await open();
    await page.goto(`${site.origin}/ask/`);
    const question = corpus.divergences[0]!.question;
    await page.getByLabel('Your question').fill(question);
    const answered = page.waitForResponse((response) => response.url().startsWith(`${api.origin}/api/query?`));
    await page.getByRole('button', { name: 'Ask' }).click();
    const response = await answered;
    expect(response.status()).toBe(200);
    expect(response.headers()['access-control-allow-origin']).toBe('*');
    const records = page.locator('#ask-records > li');
    await expect.poll(() => records.count(), { timeout: 15_000 }).toBeGreaterThan(0);
    expect(await page.getByRole('heading', { name: 'Receipt' }).isVisible()).toBe(true);
    // A result links to a page of the static site.
    const href = (await records.first().locator('a').first().getAttribute('href'))!;
    await records.first().locator('a').first().click();
    await page.waitForURL(`${site.origin}${href}`);
    expect(problems()).toEqual([]);
    expect(served.filter((path) => path.startsWith('/api/'))).toEqual([]);
    await page.close();
  });
});
