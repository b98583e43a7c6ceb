/**
 * Browser tests drive Debian's Chromium (`apt-get install chromium`, which .ci/run does) with
 * playwright-core, which never downloads a browser of its own. The suite skips, with a message,
 * only when /usr/bin/chromium is absent.
 *
 * startSiteServer builds a content folder into temporary artifacts, builds the Astro site from
 * them into a temporary SITE_OUT_DIR, and serves both with the real app on 127.0.0.1:<free port>.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Express } from 'express';
import { chromium, type Browser, type ConsoleMessage, type Page } from 'playwright-core';
import { REPO_ROOT } from '../../core/paths.ts';
import { tempDir } from '../../devkit/app.ts';

export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-quic',
  '--disable-sync',
];

export const chromiumAvailable = existsSync(CHROMIUM_PATH);
export const SKIP_MESSAGE = `browser tests skipped: ${CHROMIUM_PATH} is absent (install it with: apt-get install -y chromium; .ci/run does)`;

export const SCREENSHOT_DIR = path.join(REPO_ROOT, 'test-output', 'screenshots');

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 60_000 });
}

/** Builds the Astro site from an artifacts folder into a fresh temporary directory (`env`: build-time settings such as PUBLIC_API_ORIGIN). */
export function buildSite(artifactsDir: string, env: Record<string, string> = {}): string {
  const siteDir = tempDir('site');
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/astro/astro.js'), 'build', '--silent'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, ARTIFACTS_DIR: artifactsDir, SITE_OUT_DIR: siteDir, ASTRO_TELEMETRY_DISABLED: '1' },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`astro build failed: ${result.stderr}${result.stdout}`);
  return siteDir;
}

export interface Listening {
  origin: string;
  close(): Promise<void>;
}

export function listen(app: Express): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = app.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        origin: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
    server.on('error', reject);
  });
}

/**
 * Everything a page reports as wrong: console errors (CSP violations included), uncaught
 * exceptions, and failed same-origin requests. Tests assert the list stays empty.
 */
export function watchPage(page: Page, origin: string): string[] {
  const problems: string[] = [];
  page.on('console', (message: ConsoleMessage) => {
    // A browser showing a non-HTML answer (the API's JSON) asks for /favicon.ico on its own.
    if (message.type() === 'error' && !message.location().url.endsWith('/favicon.ico'))
      problems.push(`console error on ${page.url()}: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught exception on ${page.url()}: ${error.message}`));
  page.on('requestfailed', (request) => {
    // An aborted media range request (the player pausing, a page moving on) is not an error.
    if (request.url().startsWith(origin) && request.failure()?.errorText !== 'net::ERR_ABORTED') {
      problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`);
    }
  });
  page.on('response', (response) => {
    if (response.url().startsWith(origin) && response.status() >= 400) problems.push(`HTTP ${response.status()} for ${response.url()}`);
  });
  return problems;
}

/** A full-page screenshot kept as a test artifact in test-output/screenshots/. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Text whose contrast against its effective background is below `min` (WCAG ratio), for the
 * visible elements that hold text directly. Backgrounds are resolved up the ancestor chain;
 * elements over images or gradients, and SVG text, are skipped. The browser-side code is plain
 * JavaScript text, so no transpiler helper leaks into the page.
 */
export async function lowContrast(page: Page, min = 4.5): Promise<string[]> {
  return (await page.evaluate(`(${CONTRAST_SCRIPT})(${Number(min)})`)) as string[];
}

const CONTRAST_SCRIPT = String.raw`function (minimum) {
  const parse = (value) => {
    const match = value.match(/rgba?\(([^)]+)\)/);
    if (!match) return null;
    const parts = match[1].split(/[,\s/]+/).filter(Boolean).map(Number);
    return [parts[0], parts[1], parts[2], parts[3] === undefined ? 1 : parts[3]];
  };
  const luminance = (rgb) => {
    const [r, g, b] = rgb.slice(0, 3).map((channel) => {
      const c = channel / 255;
      return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const blend = (top, bottom) => [0, 1, 2].map((i) => top[i] * top[3] + bottom[i] * (1 - top[3])).concat(1);
  const background = (element) => {
    const layers = [];
    for (let node = element; node; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (style.backgroundImage !== 'none') return null;
      const color = parse(style.backgroundColor);
      if (color && color[3] > 0) {
        layers.push(color);
        if (color[3] === 1) break;
      }
    }
    let result = [255, 255, 255, 1];
    for (const layer of layers.reverse()) result = blend(layer, result);
    return result;
  };
  const failures = [];
  for (const element of document.querySelectorAll('body *')) {
    const hasText = [...element.childNodes].some((node) => node.nodeType === Node.TEXT_NODE && node.textContent.trim() !== '');
    if (!hasText || element.closest('svg')) continue;
    const box = element.getBoundingClientRect();
    const style = getComputedStyle(element);
    if (box.width === 0 || box.height === 0 || style.visibility === 'hidden' || Number(style.opacity) === 0) continue;
    const bg = background(element);
    const fg = parse(style.color);
    if (!bg || !fg) continue;
    const [l1, l2] = [luminance(blend(fg, bg)), luminance(bg)].sort((a, b) => b - a);
    const ratio = (l1 + 0.05) / (l2 + 0.05);
    if (ratio < minimum) failures.push(element.tagName.toLowerCase() + '.' + element.className + ' "' + element.textContent.trim().slice(0, 40) + '": ' + ratio.toFixed(2));
  }
  return failures;
}`;
