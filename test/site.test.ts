/**
 * The static site builds from the same artifacts as the API and is served by the same app.
 * This checks the built HTML itself; test/e2e/ drives it in a real browser.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { parseMarkdown, stringifyMarkdown } from '../content-files/frontmatter.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { buildApp, tempDir, type BuiltApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import type { DivergenceFull } from '../core/records.ts';
import { groupByQuestion } from '../src/lib/atlas-groups.ts';
import { CALIBRATION_FILE } from '../schemas/certification.ts';
import { chromiumAvailable, launchBrowser, listen, SKIP_MESSAGE } from './helpers/browser.ts';

let built: BuiltApp;
let siteDir: string;

const CALIBRATION = {
  date: '2026-11-26',
  embedder: 'test-embedder',
  records: 40,
  halves: 'hash of the id',
  bootstrap: { resamples: 100, seed: 1, level: 0.95 },
  floor: { pair_auc: 0.6, side_accuracy: 0.8 },
  methods: {
    'perturbation-v1': {
      pair_auc: { value: 0.559, interval: [0.534, 0.586], tune: 0.57, held_out: 0.54 },
      side_accuracy: { value: 0.764, interval: [0.719, 0.814], tune: 0.81, held_out: 0.71 },
      records: 40,
      tensions: 120,
      pairs: { named: 100, unnamed: 300 },
      passes: false,
    },
    'perturbation-v2': {
      pair_auc: { value: 0.65, interval: [0.612, 0.683], tune: 0.66, held_out: 0.64 },
      side_accuracy: { value: 0.893, interval: [0.859, 0.927], tune: 0.9, held_out: 0.886 },
      records: 40,
      tensions: 120,
      pairs: { named: 100, unnamed: 300 },
      passes: true,
    },
  },
};
/** The record page that shows the calibration: a record not put through perturbation shows it beside the tier. */
const CALIBRATED_RECORD = 'atlas/TST-D2/index.html';

function htmlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? htmlFiles(full) : entry.name.endsWith('.html') ? [full] : [];
  });
}

beforeAll(async () => {
  const contentDir = writeFixtureContent();
  // One answer cut off at its token limit, as a live council stores it.
  const d2 = path.join(contentDir, 'divergences/TST-D2.md');
  const parsed = parseMarkdown(readFileSync(d2, 'utf8'));
  const answers = parsed.data.answers as Record<string, unknown>[];
  answers[0] = { ...answers[0], truncated: true };
  // And a second round beside round 1: the second voice revised, and the tension says so.
  answers[1] = { ...answers[1], round2: { stance: 'revised', reason: 'Voice A named a case I had missed.', text: 'Revised in round two, verbatim.' } };
  const tensions = parsed.data.tensions as Record<string, unknown>[];
  tensions[0] = { ...tensions[0], moved: [String(answers[1]!.model)] };
  writeFileSync(d2, stringifyMarkdown(parsed.data, parsed.body));
  // A calibration in which one method passes the floor and the other does not (issue 45: the chart).
  writeFileSync(path.join(contentDir, CALIBRATION_FILE), `${JSON.stringify(CALIBRATION, null, 2)}\n`);
  built = await buildApp(contentDir);
  siteDir = tempDir('site');
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/astro/astro.js'), 'build', '--silent'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ARTIFACTS_DIR: built.artifactsDir, SITE_OUT_DIR: siteDir, ASTRO_TELEMETRY_DISABLED: '1' },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`astro build failed: ${result.stderr}${result.stdout}`);
}, 120_000);

describe('static site', () => {
  it('builds one page per record with the verbatim answers', () => {
    const page = readFileSync(path.join(siteDir, 'atlas/TST-D1/index.html'), 'utf8');
    expect(page).toContain('Origin does not settle ownership.\n  Endorsement under pressure does.  ');
    expect(page).toContain('alder-1');
    expect(page).toContain('href="/records/TST-D1.md"');
    expect(page).toContain('/atlas/TST-D2/');
    expect(readFileSync(path.join(siteDir, 'works/TST-1/index.html'), 'utf8')).toContain('Tide tables');
  });

  it('shows a tier typed in the content as illustrative, never explained as measured (issue 28)', () => {
    const page = readFileSync(path.join(siteDir, 'atlas/TST-D1/index.html'), 'utf8');
    // TST-D1 types tier C3 with a DRI and a split persistence, and no evidence log backs them.
    expect(page).toContain('data-tier-source="content"');
    expect(page).toContain('Illustrative, not measured:</strong> this tier and its figures are stated in the content without evidence');
    expect(page).not.toContain('This record is C3');
    expect(page).not.toContain('Is this split genuine?');
    const list = readFileSync(path.join(siteDir, 'atlas/index.html'), 'utf8');
    expect(list).toMatch(/Tier C3: paraphrase- and pressure-robust<\/span> <span class="badge tier-source source-content"[^>]*>illustrative, not measured</);
  });

  it('shows a second round beside the verbatim round-1 answer, and who moved', () => {
    const page = readFileSync(path.join(siteDir, 'atlas/TST-D2/index.html'), 'utf8');
    expect(page).toContain('Second round: revised its answer after reading the others, anonymised');
    expect(page).toContain('Voice A named a case I had missed.');
    expect(page).toContain('Revised in round two, verbatim.');
    expect(page).toMatch(/moved in the second round: /);
    expect(readFileSync(path.join(siteDir, 'atlas/TST-D1/index.html'), 'utf8')).not.toContain('Second round');
  });

  it('marks an answer that was cut off at its token limit, and only that one', () => {
    const marked = readFileSync(path.join(siteDir, 'atlas/TST-D2/index.html'), 'utf8');
    expect(marked.match(/cut off at the token limit/g)).toHaveLength(1);
    expect(readFileSync(path.join(siteDir, 'atlas/TST-D1/index.html'), 'utf8')).not.toContain('cut off at the token limit');
  });

  it('every page has one h1, landmarks, and little JavaScript', () => {
    const files = htmlFiles(siteDir);
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const html = readFileSync(file, 'utf8');
      expect(html.match(/<h1[\s>]/g), file).toHaveLength(1);
      expect(html, file).toMatch(/<main[\s>]/);
      expect(html, file).toMatch(/<nav[\s>]/);
      const scripts = [...html.matchAll(/<script[^>]*>([\s\S]*?)<\/script>/g)].reduce((sum, match) => sum + match[1]!.length, 0);
      expect(scripts, file).toBeLessThan(200 * 1024);
      expect(statSync(file).size).toBeLessThan(1024 * 1024);
    }
  });

  it('the home page shows the manifest counts', () => {
    const html = readFileSync(path.join(siteDir, 'index.html'), 'utf8');
    const counts = built.corpus.manifest.counts;
    expect(html).toContain(`<dt>Corpus works</dt><dd data-count="corpus.total_works">${counts.corpus.total_works}</dd>`);
    expect(html).toContain(`<dt>Atlas records</dt><dd data-count="atlas.live_records">${counts.atlas.live_records}</dd>`);
    // Every count shown names a number in the manifest, so the page can refresh it at load.
    for (const match of html.matchAll(/data-count="([^"]+)">([^<]*)</g)) {
      const value = match[1]!.split('.').reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], counts);
      expect(match[2], match[1]).toBe((value as number).toLocaleString('en'));
    }
  });

  it('pre-renders the Atlas filters, so tier and freshness filtering needs no JavaScript', () => {
    const records = built.corpus.divergences;
    const shown = (file: string) =>
      [...readFileSync(path.join(siteDir, file), 'utf8').matchAll(/<li class="card entry" data-id="([^"]+)"[^>]*?( hidden)?>/g)]
        .filter((match) => !match[2])
        .map((match) => match[1]);
    // One entry per question (a record and its re-elicitations, under the newest id); it shows when one of its records matches.
    const entries = (matches: (record: DivergenceFull) => boolean) =>
      groupByQuestion(records)
        .filter((entry) => entry.members.some(matches))
        .map((entry) => entry.latest.id);
    expect(records.some((record) => record.re_elicits)).toBe(true);
    expect(shown('atlas/index.html')).toEqual(entries(() => true));
    expect(shown('atlas/index.html').length).toBeLessThan(records.length);
    expect(shown('atlas/tier/C3/index.html')).toEqual(entries((record) => record.certification.tier === 'C3'));
    expect(shown('atlas/stale/index.html')).toEqual(entries((record) => record.freshness.stale));
    expect(shown('atlas/current/index.html')).toEqual(entries((record) => !record.freshness.stale));
    expect(shown('atlas/tier/C3/stale/index.html')).toEqual(entries((record) => record.freshness.stale && record.certification.tier === 'C3'));
    expect(shown('atlas/tier/C1/index.html')).toEqual([]);
    const page = readFileSync(path.join(siteDir, 'atlas/tier/C3/index.html'), 'utf8');
    expect(page).toContain('href="/atlas/tier/C3/stale/"');
    expect(page).toContain('href="/atlas/tier/C2/"');
    expect(page).toMatch(/<form[^>]+action="\/api\/divergences"/);
  });

  it('an Atlas entry asked more than once says who moved between the dates', () => {
    const html = readFileSync(path.join(siteDir, 'atlas/index.html'), 'utf8');
    const later = built.corpus.divergences.find((record) => record.re_elicits)!;
    const pair = (later.longitudinal ?? []).find((entry) => entry.later.id === later.id)!;
    expect(pair).toBeDefined();
    const line =
      html.match(new RegExp(`<p class="moved-line small" data-pair="${pair.earlier.id}:${pair.later.id}">([\\s\\S]*?)</p>`))?.[1]?.replace(/\s+/g, ' ') ?? '';
    expect(line).toContain(`Between ${pair.earlier.date} and ${pair.later.date}:`);
    expect(line).toContain(pair.moved.length === 0 ? 'no voice moved' : `${pair.moved.join(', ')} moved`);
  });

  it('every page names a JSON and a Markdown twin that the app serves', async () => {
    const app = createApp({ corpus: built.corpus, siteDir, log: () => {} });
    const twins = new Set<string>();
    for (const file of htmlFiles(siteDir)) {
      const html = readFileSync(file, 'utf8');
      for (const type of ['application/json', 'text/markdown']) {
        const href = new RegExp(`<link rel="alternate" type="${type.replace('/', '\\/')}" href="([^"]+)"`).exec(html)?.[1];
        expect(href, `${file} ${type}`).toBeTruthy();
        expect(html, file).toContain(`<a href="${href!.replace(/&/g, '&amp;')}" data-twin=`);
        twins.add(href!.replace(/&amp;/g, '&'));
      }
    }
    for (const twin of twins) {
      const response = await request(app).get(twin);
      expect(response.status, twin).toBe(200);
    }
    const atlas = await request(app).get('/atlas.md');
    expect(atlas.headers['content-type']).toMatch(/text\/markdown/);
    expect(atlas.text).toContain('[Can a refusal that came from training still be your own?](/records/TST-D1.md)');
    const doc = await request(app).get('/docs/limitations.json');
    expect(doc.body).toMatchObject({ name: 'limitations', markdown_url: '/limitations.md' });
  });

  it('the sitemap lists every page of the built site and every record twin, and each URL answers 200', async () => {
    const app = createApp({ corpus: built.corpus, siteDir, log: () => {} });
    const xml = (await request(app).get('/sitemap.xml').set('Host', 'site.test').expect(200)).text;
    const paths = [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((match) => {
      expect(match[1]!.startsWith('http://site.test/'), match[1]).toBe(true);
      return match[1]!.slice('http://site.test'.length).replaceAll('&amp;', '&');
    });
    const pages = htmlFiles(siteDir).filter((file) => path.basename(file) === 'index.html');
    expect(paths.filter((urlPath) => urlPath.endsWith('/'))).toHaveLength(pages.length);
    expect(paths).toEqual(expect.arrayContaining(['/', '/atlas/', '/atlas/TST-D1/', '/works/TST-1/', '/records/TST-D1.md', '/records/TST-1.json']));
    for (const urlPath of paths) expect((await request(app).get(urlPath)).status, urlPath).toBe(200);
  });

  it("draws each record's tension map and links the llms.txt orientation", () => {
    const page = readFileSync(path.join(siteDir, 'atlas/TST-D1/index.html'), 'utf8');
    expect(page).toMatch(/<figure class="tension-map">\s*<svg[^>]+role="img"/);
    expect(page).toContain('Alder versus Birch: ownership of refusal.');
    for (const file of htmlFiles(siteDir)) expect(readFileSync(file, 'utf8'), file).toContain('href="/llms.txt"');
  });

  it("shows each concept's lineage on its page, from the same view as /api/lineage", () => {
    const page = readFileSync(path.join(siteDir, 'graph/refusal/index.html'), 'utf8');
    const section = page.slice(page.indexOf('id="lineage-heading"'));
    expect(section).toMatch(/1 work, 0 Atlas records, 0 open and 0 repaired tensions/);
    expect(section).toMatch(/<time datetime="2025-04-01">2025-04-01<\/time>\s*<a href="\/works\/TST-4\/"/);
    expect(section).toContain('href="/api/lineage?concept=refusal"');
  });

  it('is served by the API process beside the agent files', async () => {
    const app = createApp({ corpus: built.corpus, siteDir, log: () => {} });
    const home = await request(app).get('/');
    expect(home.status).toBe(200);
    expect(home.headers['content-type']).toMatch(/text\/html/);
    expect(home.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(home.headers['x-content-type-options']).toBe('nosniff');
    const works = await request(app).get('/works/');
    expect(works.headers['content-type']).toMatch(/text\/html/);
    const twin = await request(app).get('/records/TST-1.json');
    expect(twin.body.id).toBe('TST-1');
    const health = await request(app).get('/api/health');
    expect(health.body.capabilities.site).toBe(true);
  });
});

describe('the calibration as a picture (issue 45)', () => {
  const sentence =
    "This deployment's tiers are measured by an instrument that sees real splits: perturbation-v2 (stance on the named claims) passes the floor.";

  for (const [page, form] of [
    ['atlas/index.html', 'atlas'],
    [CALIBRATED_RECORD, 'record'],
  ] as const) {
    it(`${page} shows the chart, an image with its title and description, and the figures in words beside it`, () => {
      const html = readFileSync(path.join(siteDir, page), 'utf8');
      const block = html.match(new RegExp(`<div class="calibration[^"]*" data-calibration="${form}"[\\s\\S]*?</figure>`))?.[0];
      expect(block, page).toBeDefined();
      const svgText = block!.match(/<svg[\s\S]*?<\/svg>/)![0];
      const svg = new DOMParser({
        onError: (level, message) => {
          throw new Error(`${level}: ${message}`);
        },
      }).parseFromString(svgText, 'image/svg+xml').documentElement!;
      expect(svg.getAttribute('role')).toBe('img');
      const [title, desc] = [svg.getElementsByTagName('title')[0], svg.getElementsByTagName('desc')[0]];
      expect(svg.getAttribute('aria-labelledby')).toBe(`${title?.getAttribute('id')} ${desc?.getAttribute('id')}`);
      expect(desc?.textContent).toContain(sentence);
      const methods = Array.from(svg.getElementsByTagName('g')).filter((g) => g.hasAttribute('data-method'));
      expect(methods.map((g) => [g.getAttribute('data-method'), g.getAttribute('data-passes')])).toEqual([
        ['perturbation-v1', 'false'],
        ['perturbation-v2', 'true'],
      ]);
      // The text alternative: the sentence, then each method's figures (data-method), and the link to the data.
      expect(block).toContain(`data-calibration-sentence><strong>${sentence.replace("'", '&#39;')}</strong>`);
      expect(block).toMatch(
        /<li data-method="perturbation-v1">perturbation-v1 \(whole-answer distance\): pair AUC 0\.56 \(95 % CI 0\.53–0\.59\), side accuracy 0\.76 \(95 % CI 0\.72–0\.81\); below the floor/,
      );
      expect(block).toMatch(
        /<li data-method="perturbation-v2">perturbation-v2 \(stance on the named claims\): pair AUC 0\.65 \(95 % CI 0\.61–0\.68\), side accuracy 0\.89 \(95 % CI 0\.86–0\.93\); passes the floor/,
      );
      expect(block).toContain('href="/certification-calibration.json"');
    });
  }

  if (!chromiumAvailable) console.warn(SKIP_MESSAGE);

  describe.skipIf(!chromiumAvailable)('in Chromium', () => {
    let server: Awaited<ReturnType<typeof listen>>;
    let browser: Awaited<ReturnType<typeof launchBrowser>>;
    beforeAll(async () => {
      server = await listen(createApp({ corpus: built.corpus, siteDir, log: () => {} }));
      browser = await launchBrowser();
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await server?.close();
    });

    it('fits a phone without scrolling sideways, and axe finds nothing serious on the Atlas list and the record page, light and dark', async () => {
      const axe = readFileSync(path.join(REPO_ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
      for (const [width, colorScheme] of [
        [375, 'light'],
        [1280, 'light'],
        [1280, 'dark'],
      ] as const) {
        const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme });
        const page = await context.newPage();
        for (const pagePath of ['/atlas/', `/${path.dirname(CALIBRATED_RECORD)}/`]) {
          await page.goto(`${server.origin}${pagePath}`);
          const where = `${pagePath} at ${width} px, ${colorScheme}`;
          const chart = page.locator('[data-calibration] svg[role="img"]');
          expect(await chart.count(), where).toBe(1);
          const box = (await chart.boundingBox())!;
          expect(box.x, where).toBeGreaterThanOrEqual(0);
          expect(box.x + box.width, where).toBeLessThanOrEqual(width);
          expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), where).toBe(true);
          await page.addScriptTag({ content: axe });
          const violations = (await page.evaluate(
            `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id + ': ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')))`,
          )) as string[];
          expect(violations, where).toEqual([]);
        }
        await context.close();
      }
    }, 120_000);
  });
});
