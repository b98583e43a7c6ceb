/**
 * The site's tension pages (/tensions/, its static filter pages and one page per tension) are
 * built from the same artifacts and grouped by the same function as GET /api/tensions, so the
 * two agree: every tension once, its sightings, its lifecycle and its dispositions.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseMarkdown, stringifyMarkdown, stringifyYaml } from '../content-files/frontmatter.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { buildApp, tempDir, type BuiltApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

const REPAIRED = 'alder__birch__ownership-of-refusal';
const OPEN = 'birch__cedar__degrees-of-reflection';

let built: BuiltApp;
let siteDir: string;

const page = (relative: string) => readFileSync(path.join(siteDir, relative), 'utf8');
const json = (relative: string) =>
  JSON.parse(page(relative)) as { count: number; total: number; api: string; tensions: { id: string; sighting_count: number; lifecycle: string }[] };
const keysIn = (html: string) => [...html.matchAll(/data-key="([^"]+)"/g)].map((match) => match[1]);
/** The part of a page inside one lifecycle group's <section>. */
const group = (html: string, stage: string) => /<section[^>]*id="(\w+)"[\s\S]*?<\/section>/g.exec(html.slice(html.indexOf(`id="${stage}"`) - 40))?.[0] ?? '';

beforeAll(async () => {
  const dir = writeFixtureContent();
  // A second tension on the re-elicitation (open, no disposition) beside the one both records name.
  const d2 = path.join(dir, 'divergences/TST-D2.md');
  const parsed = parseMarkdown(readFileSync(d2, 'utf8'));
  const tensions = parsed.data.tensions as Record<string, unknown>[];
  tensions.push({
    topic: 'degrees of reflection',
    voice_a: 'Cedar',
    claim_a: 'Ownership comes in degrees.',
    voice_b: 'Birch',
    claim_b: 'Installed is installed, however reflected on.',
    status: 'unresolved',
  });
  writeFileSync(d2, stringifyMarkdown(parsed.data, parsed.body));
  // The shared tension: held, then reclassified (repaired), so its history has two entries.
  mkdirSync(path.join(dir, 'tensions'));
  writeFileSync(
    path.join(dir, 'tensions', `${REPAIRED}.yaml`),
    stringifyYaml({
      key: REPAIRED,
      dispositions: [
        { kind: 'held', by: 'curator', at: '2026-02-01T10:00:00Z', reason: 'Both readings are live.' },
        { kind: 'reclassified', by: 'second-curator', at: '2026-03-01', earlier_voice: 'Birch', note: 'Birch later moved to the endorsement view.' },
      ],
    }),
  );
  built = await buildApp(dir);
  siteDir = tempDir('tension-site');
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/astro/astro.js'), 'build', '--silent'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ARTIFACTS_DIR: built.artifactsDir, SITE_OUT_DIR: siteDir, ASTRO_TELEMETRY_DISABLED: '1' },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`astro build failed: ${result.stderr}${result.stdout}`);
}, 180_000);

describe('tension pages', () => {
  it('lists every tension once, grouped open then repaired, with the counts GET /api/tensions gives', async () => {
    const { body } = await request(built.app).get('/api/tensions').expect(200);
    const html = page('tensions/index.html');
    expect(keysIn(html).sort()).toEqual(body.tensions.map((tension: { id: string }) => tension.id).sort());
    expect(body.by_lifecycle).toEqual({ open: 1, repaired: 1 });
    expect(keysIn(group(html, 'open'))).toEqual([OPEN]);
    expect(keysIn(group(html, 'repaired'))).toEqual([REPAIRED]);
    expect(html.indexOf('id="open"')).toBeLessThan(html.indexOf('id="repaired"'));
    for (const tension of body.tensions as { id: string; sighting_count: number }[]) {
      expect(html).toMatch(new RegExp(`data-key="${tension.id}"[^>]*data-sightings="${tension.sighting_count}"`));
    }
    // Sightings link to the record's tension card; the repaired one was seen on both records.
    expect(html).toContain('href="/atlas/TST-D1/#TST-D1-T1"');
    expect(html).toContain('href="/atlas/TST-D2/#TST-D2-T1"');
    expect(html).toContain('href="/atlas/TST-D2/#TST-D2-T2"');
  });

  it('shows each tension’s two voices by name and colour, its latest disposition and the whole history', () => {
    const html = page('tensions/index.html');
    const card = html.slice(html.indexOf(`data-key="${REPAIRED}"`));
    expect(card).toMatch(/class="side voice-\d" data-voice="Alder">\s*<span class="voice-name">Alder<\/span>\s*<p>Endorsement makes it yours\.<\/p>/);
    expect(card).toContain('Latest disposition:</span> <strong data-kind="reclassified">Reclassified</strong> ');
    expect(card).toContain('second-curator');
    expect(card).toContain(
      '<p class="disposition-text">Birch’s side is an earlier-stage view.</p><p class="disposition-text">Birch later moved to the endorsement view.</p>',
    );
    const history = /<details class="disposition-history"[\s\S]*?<\/details>/.exec(card)![0];
    expect(history).toContain('Both readings are live.');
    expect(history.match(/<li data-kind=/g)).toHaveLength(2);
    expect(html.slice(html.indexOf(`data-key="${OPEN}"`))).toContain('No curator disposition yet.');
  });

  it('has static filter pages by lifecycle and voice, each announcing its own JSON twin, which agrees with the API', async () => {
    const cases = [
      { file: 'tensions/', query: '' },
      { file: 'tensions/open/', query: 'lifecycle=open' },
      { file: 'tensions/repaired/', query: 'lifecycle=repaired' },
      { file: 'tensions/voice/cedar/', query: 'voice=Cedar' },
      { file: 'tensions/voice/alder/', query: 'voice=Alder' },
      { file: 'tensions/voice/birch/', query: 'voice=Birch' },
    ];
    for (const { file, query } of cases) {
      const html = page(`${file}index.html`);
      expect(html).toContain(`<link rel="alternate" type="application/json" href="/${file}index.json">`);
      const twin = json(`${file}index.json`);
      const { body } = await request(built.app)
        .get(`/api/tensions${query ? `?${query}` : ''}`)
        .expect(200);
      const ids = body.tensions.map((tension: { id: string }) => tension.id);
      expect(
        twin.tensions.map((tension) => tension.id),
        file,
      ).toEqual(ids);
      expect(twin.count).toBe(body.count);
      expect(twin.total).toBe(body.total);
      expect(keysIn(html).sort(), file).toEqual([...ids].sort());
      expect(twin.api).toBe(`/api/tensions${query ? `?${query}` : ''}`);
    }
    expect(keysIn(page('tensions/voice/alder/index.html'))).toEqual([REPAIRED]);
    expect(page('tensions/open/index.html')).toContain('aria-current="page">Open (1)');
  });

  it('gives each tension its own page: both sides, every sighting with its claims, the history, and its JSON', () => {
    const html = page(`tensions/${REPAIRED}/index.html`);
    expect(html).toContain(`<link rel="alternate" type="application/json" href="/api/tensions?key=${REPAIRED}">`);
    expect(html).toContain(`href="/api/tensions?key=${REPAIRED}"`);
    expect(html.match(/<li class="tension sighting" data-record="TST-D\d"/g)).toEqual([
      '<li class="tension sighting" data-record="TST-D1"',
      '<li class="tension sighting" data-record="TST-D2"',
    ]);
    expect(html).toContain('<time datetime="2025-06-01">');
    expect(html).toContain('<time datetime="2026-01-10">');
    const history = /<ol class="disposition disposition-history full">[\s\S]*?<\/ol>/.exec(html)![0];
    expect(history.match(/<li data-kind="(\w+)"/g)).toEqual(['<li data-kind="held"', '<li data-kind="reclassified"']);
    expect(history).toContain('(latest)');
    expect(html).toContain('Repaired by the latest curator disposition (reclassified).');
    expect(page(`tensions/${OPEN}/index.html`)).toContain('Open: no curator has recorded a disposition yet.');
    expect(existsSync(path.join(siteDir, 'tensions', OPEN, 'index.html'))).toBe(true);
  });

  it('is linked from the navigation and from each tension card on a record page', () => {
    expect(page('index.html')).toContain('<a href="/tensions/"');
    const record = page('atlas/TST-D2/index.html');
    expect(record).toContain(`href="/tensions/${REPAIRED}/"`);
    expect(record).toContain(`href="/tensions/${OPEN}/"`);
    expect(page('tensions/index.html')).toMatch(/<a href="\/tensions\/" aria-current="page">Tensions<\/a>/);
  });

  it('has a Markdown twin listing every tension with its key', () => {
    const markdown = page('tensions.md');
    expect(markdown).toContain(`\`${REPAIRED}\``);
    expect(markdown).toContain(`\`${OPEN}\``);
    expect(markdown).toContain('## Repaired (1)');
  });
});
