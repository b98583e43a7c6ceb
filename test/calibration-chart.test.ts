/**
 * The calibration as a picture (issue 45, part 5): core/certify/calibration-chart.ts draws each
 * method's pair AUC and side accuracy on a 0–1 scale, with the plain-text alternative beside it.
 * The SVG is read back with a real XML parser (@xmldom/xmldom), so malformed or unescaped output
 * fails here rather than in a browser.
 */
import { DOMParser, type Element } from '@xmldom/xmldom';
import { describe, expect, it } from 'vitest';
import { calibrationChart, CHART_WIDTH, SCALE, escapeXml, reachesFloor, scaleX } from '../core/certify/calibration-chart.ts';
import type { CalibrationSummary, MethodCalibrationSummary } from '../core/certify/calibration-summary.ts';

const failing: MethodCalibrationSummary = {
  pair_auc: { value: 0.434, interval: [0.378, 0.487] },
  side_accuracy: { value: 0.97, interval: [0.922, 1] },
  passes: false,
};
const passing: MethodCalibrationSummary = {
  pair_auc: { value: 0.66, interval: [0.6, 0.72] },
  side_accuracy: { value: 0.9, interval: [0.85, 0.95] },
  passes: true,
};

function summary(methods: Record<string, MethodCalibrationSummary>, floor = { pair_auc: 0.55, side_accuracy: 0.8 }): CalibrationSummary {
  return { date: '2026-11-26', embedder: 'test-embedder', records: 29, floor, methods, url: '/certification-calibration.json' };
}

/** Parses strictly: any XML error or warning throws. */
function parse(svg: string): Element {
  const document = new DOMParser({
    onError: (level, message) => {
      throw new Error(`${level}: ${message}`);
    },
  }).parseFromString(svg, 'image/svg+xml');
  return document.documentElement!;
}

/** Where a value should sit on the scale. */
const at = (value: number) => SCALE.left + value * (SCALE.right - SCALE.left);
const all = (root: Element, tag: string): Element[] => Array.from(root.getElementsByTagName(tag));
const number = (element: Element | undefined, name: string) => Number(element?.getAttribute(name));
const figureGroup = (root: Element, method: string, figure: string): Element => {
  const group = all(root, 'g').find((g) => g.getAttribute('data-method') === method);
  const row = group && all(group, 'g').find((g) => g.getAttribute('data-figure') === figure);
  if (!row) throw new Error(`no ${method} ${figure} row`);
  return row;
};
const byClass = (root: Element, tag: string, className: string) =>
  all(root, tag).filter((element) => (element.getAttribute('class') ?? '').split(' ').includes(className));

describe('the calibration chart', () => {
  it('is an image with a title and a description that it names, in a viewBox and no fixed size', () => {
    const chart = calibrationChart(summary({ 'perturbation-v1': failing }), { id: 'calibration-atlas' });
    const svg = parse(chart.svg);
    expect(svg.tagName).toBe('svg');
    expect(svg.getAttribute('role')).toBe('img');
    expect(svg.getAttribute('viewBox')).toMatch(new RegExp(`^0 0 ${CHART_WIDTH} \\d+(\\.\\d)?$`));
    expect(svg.hasAttribute('width')).toBe(false);
    expect(svg.getAttribute('aria-labelledby')).toBe('calibration-atlas-title calibration-atlas-desc');
    expect(all(svg, 'title')[0]?.getAttribute('id')).toBe('calibration-atlas-title');
    expect(all(svg, 'title')[0]?.textContent).toContain('measured on 29 records (2026-11-26)');
    expect(all(svg, 'desc')[0]?.getAttribute('id')).toBe('calibration-atlas-desc');
    expect(all(svg, 'desc')[0]?.textContent).toContain(chart.sentence);
    expect(all(svg, 'desc')[0]?.textContent).toContain(chart.figures[0]!.line);
  });

  it('places each estimate as a dot and each 95 % interval as a bar at their values on the 0–1 scale', () => {
    expect(scaleX(0)).toBe(SCALE.left);
    expect(scaleX(1)).toBe(SCALE.right);
    expect(scaleX(0.5)).toBe((SCALE.left + SCALE.right) / 2);
    const svg = parse(calibrationChart(summary({ 'perturbation-v2': passing })).svg);
    for (const [kind, figure] of [
      ['pair_auc', passing.pair_auc],
      ['side_accuracy', passing.side_accuracy],
    ] as const) {
      const row = figureGroup(svg, 'perturbation-v2', kind);
      const dot = byClass(row, 'circle', 'estimate')[0];
      expect(number(dot, 'cx')).toBeCloseTo(at(figure.value!), 1);
      const bar = byClass(row, 'rect', 'interval')[0];
      expect(number(bar, 'x')).toBeCloseTo(at(figure.interval![0]), 1);
      expect(number(bar, 'x') + number(bar, 'width')).toBeCloseTo(at(figure.interval![1]), 0);
      // The dot and the bar sit on the track.
      const track = byClass(row, 'line', 'track')[0];
      expect(number(dot, 'cy')).toBe(number(track, 'y1'));
      expect(number(bar, 'y') + number(bar, 'height') / 2).toBe(number(track, 'y1'));
    }
    // Values outside 0–1 stay on the scale.
    expect(scaleX(-0.2)).toBe(SCALE.left);
    expect(scaleX(1.3)).toBe(SCALE.right);
  });

  it('marks each row’s floor and the 0.5 line, and labels both', () => {
    const svg = parse(calibrationChart(summary({ 'perturbation-v1': failing }, { pair_auc: 0.6, side_accuracy: 0.75 })).svg);
    const auc = figureGroup(svg, 'perturbation-v1', 'pair_auc');
    const sides = figureGroup(svg, 'perturbation-v1', 'side_accuracy');
    const floorOf = (row: Element) => byClass(row, 'line', 'floor')[0];
    expect(number(floorOf(auc), 'x1')).toBeCloseTo(at(0.6), 1);
    expect(number(floorOf(auc), 'x2')).toBe(number(floorOf(auc), 'x1'));
    expect(number(floorOf(sides), 'x1')).toBeCloseTo(at(0.75), 1);
    expect(byClass(auc, 'text', 'floor-label')[0]?.textContent).toBe('floor 0.6');
    expect(byClass(sides, 'text', 'floor-label')[0]?.textContent).toBe('floor 0.75');
    expect(number(byClass(auc, 'line', 'blind')[0], 'x1')).toBe(at(0.5));
    expect(byClass(auc, 'text', 'reference')[0]?.textContent).toBe('blind 0.5');
    expect(byClass(sides, 'text', 'reference')[0]?.textContent).toBe('chance 0.5');
  });

  it('keeps the floor label inside the drawing and off the 0.5 label, whichever side the floor is on', () => {
    for (const floor of [0.05, 0.3, 0.5, 0.55, 0.8, 0.99]) {
      const svg = parse(calibrationChart(summary({ m: failing }, { pair_auc: floor, side_accuracy: floor })).svg);
      const row = figureGroup(svg, 'm', 'pair_auc');
      const label = byClass(row, 'text', 'floor-label')[0]!;
      const blind = byClass(row, 'text', 'reference')[0]!;
      const span = (text: Element): [number, number] => {
        const x = number(text, 'x');
        const width = text.textContent!.length * 11 * 0.56;
        return text.getAttribute('text-anchor') === 'end' ? [x - width, x] : [x, x + width];
      };
      const [left, right] = span(label);
      expect(left, `floor ${floor}`).toBeGreaterThanOrEqual(0);
      expect(right, `floor ${floor}`).toBeLessThanOrEqual(CHART_WIDTH);
      const [blindLeft, blindRight] = span(blind);
      expect(right <= blindLeft || left >= blindRight, `floor ${floor} overlaps the 0.5 label`).toBe(true);
    }
  });

  it('tells passing from failing by more than colour: filled or hollow dots and the words', () => {
    const chart = calibrationChart(summary({ 'perturbation-v1': failing, 'perturbation-v2': passing }));
    const svg = parse(chart.svg);
    const method = (name: string) => all(svg, 'g').find((g) => g.getAttribute('data-method') === name)!;
    expect(method('perturbation-v1').getAttribute('data-passes')).toBe('false');
    expect(method('perturbation-v2').getAttribute('data-passes')).toBe('true');
    expect(byClass(method('perturbation-v1'), 'text', 'verdict')[0]?.textContent).toBe('✗ Below the floor');
    expect(byClass(method('perturbation-v2'), 'text', 'verdict')[0]?.textContent).toBe('✓ Passes the floor');
    // perturbation-v1: the AUC's interval stays under its floor (hollow), the sides' clears it (filled).
    const dotClass = (name: string, figure: string) => byClass(figureGroup(svg, name, figure), 'circle', 'estimate')[0]?.getAttribute('class');
    expect(dotClass('perturbation-v1', 'pair_auc')).toBe('estimate short');
    expect(dotClass('perturbation-v1', 'side_accuracy')).toBe('estimate reaches');
    expect(dotClass('perturbation-v2', 'pair_auc')).toBe('estimate reaches');
    expect(dotClass('perturbation-v2', 'side_accuracy')).toBe('estimate reaches');
    // The key says what filled and hollow mean.
    const legend = byClass(svg, 'g', 'legend')[0]!;
    expect(all(legend, 'text').map((text) => text.textContent)).toEqual([
      'estimate; interval low ≥ floor',
      'estimate; interval low < floor',
      '95 % interval (CI)',
    ]);
    expect(reachesFloor({ value: 0.6, interval: [0.55, 0.65] }, 0.55)).toBe(true);
    expect(reachesFloor({ value: 0.6, interval: [0.549, 0.65] }, 0.55)).toBe(false);
  });

  it('says in one plain sentence whether the tiers are measured by an instrument that sees real splits, and which method', () => {
    const none = calibrationChart(summary({ 'perturbation-v1': failing, 'perturbation-v2': { ...passing, passes: false } }));
    expect(none.sentence).toBe(
      "This deployment's tiers are not measured by an instrument that sees real splits: perturbation-v1 (whole-answer distance) and perturbation-v2 (stance on the named claims) are below the floor.",
    );
    expect(none.passing).toEqual([]);
    const one = calibrationChart(summary({ 'perturbation-v1': failing, 'perturbation-v2': passing }));
    expect(one.sentence).toBe(
      "This deployment's tiers are measured by an instrument that sees real splits: perturbation-v2 (stance on the named claims) passes the floor.",
    );
    expect(one.passing).toEqual(['perturbation-v2']);
    expect(one.figures).toEqual([
      {
        method: 'perturbation-v1',
        line: 'perturbation-v1 (whole-answer distance): pair AUC 0.43 (95 % CI 0.38–0.49), side accuracy 0.97 (95 % CI 0.92–1.00); below the floor (interval lows at least 0.55 and 0.8).',
      },
      {
        method: 'perturbation-v2',
        line: 'perturbation-v2 (stance on the named claims): pair AUC 0.66 (95 % CI 0.60–0.72), side accuracy 0.90 (95 % CI 0.85–0.95); passes the floor (interval lows at least 0.55 and 0.8).',
      },
    ]);
    // Narrowed to the method that measured a record, the sentence speaks of that method alone.
    const narrowed = calibrationChart(summary({ 'perturbation-v1': failing, 'perturbation-v2': passing }), { methods: ['perturbation-v1'] });
    expect(narrowed.sentence).toBe(
      "This deployment's tiers are not measured by an instrument that sees real splits: perturbation-v1 (whole-answer distance) is below the floor.",
    );
    expect(parse(narrowed.svg).getElementsByTagName('g').length).toBeGreaterThan(0);
    expect(narrowed.svg).not.toContain('perturbation-v2');
  });

  it('escapes every text it draws, method names and ids included', () => {
    expect(escapeXml(`a & b < c > d "e" 'f'`)).toBe('a &amp; b &lt; c &gt; d &quot;e&quot; &apos;f&apos;');
    const name = 'v3 <script>alert("x")</script> & "more"';
    const chart = calibrationChart(summary({ [name]: failing }), { id: 'x" onload="alert(1)' });
    const svg = parse(chart.svg);
    expect(all(svg, 'script')).toEqual([]);
    expect(svg.hasAttribute('onload')).toBe(false);
    expect(all(svg, 'g').find((g) => g.getAttribute('data-method') === name)).toBeDefined();
    expect(
      all(svg, 'text')
        .map((text) => text.textContent)
        .join(' '),
    ).toContain('v3 <script>alert("x")</script>');
    expect(all(svg, 'desc')[0]?.textContent).toContain(`${name}: pair AUC`);
    expect(all(svg, 'title')[0]?.getAttribute('id')).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('draws a figure without an interval or an estimate without inventing one', () => {
    const partial: MethodCalibrationSummary = {
      pair_auc: { value: 0.7, interval: null },
      side_accuracy: { value: null, interval: null },
      passes: false,
    };
    const chart = calibrationChart(summary({ partial }));
    const svg = parse(chart.svg);
    const auc = figureGroup(svg, 'partial', 'pair_auc');
    expect(byClass(auc, 'rect', 'interval')).toEqual([]);
    expect(byClass(auc, 'circle', 'estimate')[0]?.getAttribute('class')).toBe('estimate short');
    expect(byClass(auc, 'text', 'interval-label')[0]?.textContent).toBe('no interval');
    expect(auc.getAttribute('data-reaches-floor')).toBe('false');
    const sides = figureGroup(svg, 'partial', 'side_accuracy');
    expect(byClass(sides, 'circle', 'estimate')).toEqual([]);
    expect(byClass(sides, 'text', 'row-label')[0]?.textContent).toBe('Side accuracy not measured');
    expect(chart.figures[0]!.line).toBe('partial: pair AUC 0.70, side accuracy ?; below the floor (interval lows at least 0.55 and 0.8).');
  });

  it('wraps a long method name instead of running off the drawing, and draws nothing for a method it does not have', () => {
    const long = 'a-method-with-a-long-name measuring the split in several careful ways at once';
    const svg = parse(calibrationChart(summary({ [long]: failing })).svg);
    const lines = byClass(svg, 'text', 'method-name').map((text) => text.textContent!);
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.join(' ')).toBe(long);
    for (const line of lines) expect(line.length * 12 * 0.62).toBeLessThanOrEqual(CHART_WIDTH);
    const empty = calibrationChart(summary({ 'perturbation-v1': failing }), { methods: ['perturbation-v9'] });
    expect(empty.figures).toEqual([]);
    expect(byClass(parse(empty.svg), 'g', 'method')).toEqual([]);
  });

  it('is deterministic: the same summary draws the same bytes', () => {
    const input = summary({ 'perturbation-v1': failing, 'perturbation-v2': passing });
    expect(calibrationChart(input, { id: 'a' }).svg).toBe(calibrationChart(structuredClone(input), { id: 'a' }).svg);
  });
});
