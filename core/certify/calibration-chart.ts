/**
 * The calibration as a picture (issue 45): how well this deployment's instrument sees splits,
 * drawn at build time as a small SVG for the Atlas list and the record pages. Per method, two
 * rows (pair AUC, side accuracy) on one 0–1 scale: the estimate a dot, its 95 % interval a bar,
 * the floor a dashed line, 0.5 (blind for the AUC, chance for the sides) a dotted one. A dot is
 * filled when its interval's low end reaches the floor and hollow when it does not, and each
 * method says in words whether it passes, so nothing rests on colour alone. Colours come from
 * the site's stylesheet through class names (`.calibration-chart` in src/styles/global.css).
 *
 * Beside the picture, the same content in plain text: one sentence (does any method pass?) and
 * one line of figures per method. Pure and deterministic: the summary in, strings out.
 */
import { figureText, type CalibrationFigure, type CalibrationSummary, type MethodCalibrationSummary } from './calibration-summary.ts';
import { methodDescription } from './record-view.ts';

/** "perturbation-v2 (stance on the named claims)", or the bare name of a method we do not know. */
export function methodName(method: string): string {
  const description = methodDescription(method);
  return description ? `${method} (${description})` : method;
}

export interface CalibrationChartOptions {
  /** Only these methods, in this order (the record page: the method that measured it). Default: all. */
  methods?: readonly string[];
  /** Prefix of the SVG's element ids, unique on its page. */
  id?: string;
}

export interface CalibrationChart {
  /** The SVG element, role="img" with a <title> and a <desc>. */
  svg: string;
  /** Whether the tiers are measured by an instrument that sees real splits, and which method says so. */
  sentence: string;
  /** One line per method: its figures in words, and whether it passes the floor. */
  figures: { method: string; line: string }[];
  /** The methods shown that pass the floor. */
  passing: string[];
}

// The drawing's coordinate system: 240 units wide, so its 12-unit text is still 12 px in the record
// page's side panel (about 250 px) and near the body text's size in a phone's column (about 330 px).
export const CHART_WIDTH = 240;
/** Where 0 and 1 sit on the scale. */
export const SCALE = { left: 14, right: 226 } as const;
const TEXT = 12;
const SMALL = 11;
/** Rough advance of one character, per unit of font size (bold: a little more), to keep labels apart and inside. */
const CHARACTER = 0.56;
const BOLD_CHARACTER = 0.62;
const fits = (characters: number, size = TEXT, advance = CHARACTER) => characters * size * advance <= CHART_WIDTH;
const HEADING_LINE = 16;
const ROW_HEIGHT = 56;
const METHOD_GAP = 14;

const round = (value: number) => Math.round(value * 10) / 10;

/** The x of a value on the scale, clamped to 0–1 and rounded to a tenth of a unit. */
export function scaleX(value: number): number {
  const clamped = Math.min(1, Math.max(0, value));
  return round(SCALE.left + clamped * (SCALE.right - SCALE.left));
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Text made safe for XML character data and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character] ?? character);
}

/** A figure as the text gives it (two decimals). */
const two = (value: number) => value.toFixed(2);
/** A floor as written in the calibration file: 0.8, 0.55. */
const short = (value: number) => String(round(value * 1000) / 1000);

/** The interval's low end reaches the floor (what the method's `passes` asks of both figures). */
export function reachesFloor(figure: CalibrationFigure, floor: number): boolean {
  return figure.interval !== null && figure.interval[0] >= floor;
}

/** Text broken at spaces into lines of at most `max` characters (a longer word is cut). */
function wrap(text: string, max: number): string[] {
  const words = text
    .split(/\s+/)
    .filter(Boolean)
    .flatMap((word) => word.match(new RegExp(`.{1,${max}}`, 'gu')) ?? []);
  const lines: string[] = [];
  for (const word of words) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + word.length + 1 <= max) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines.length > 0 ? lines : [text];
}

function textElement(x: number, y: number, text: string, attributes: Record<string, string | number> = {}): string {
  const rest = Object.entries(attributes)
    .map(([name, value]) => ` ${name}="${escapeXml(String(value))}"`)
    .join('');
  return `<text x="${x}" y="${y}"${rest}>${escapeXml(text)}</text>`;
}

/**
 * Where the labels under the track go: "blind 0.5" on the side of its line away from the floor,
 * the floor's label on the other side, turned back inside the drawing at the edges.
 */
function referenceLabels(floor: number, blindWord: string, y: number): string {
  const half = scaleX(0.5);
  const at = scaleX(floor);
  const floorText = `floor ${short(floor)}`;
  const blindText = `${blindWord} 0.5`;
  const width = (text: string) => text.length * SMALL * CHARACTER;
  const floorRight = floor >= 0.5;
  // Beside its line, pushed back inside the drawing near an edge (it sits below the line's end).
  const floorLabel = floorRight
    ? { x: Math.min(at + 3, CHART_WIDTH - 1 - width(floorText)), anchor: 'start' }
    : { x: Math.max(at - 3, 1 + width(floorText)), anchor: 'end' };
  const blind = floorRight ? { x: half - 3, anchor: 'end' } : { x: half + 3, anchor: 'start' };
  return [
    textElement(round(blind.x), y, blindText, { class: 'reference', 'text-anchor': blind.anchor }),
    textElement(round(floorLabel.x), y, floorText, { class: 'floor-label', 'text-anchor': floorLabel.anchor }),
  ].join('');
}

interface RowInput {
  name: string;
  figure: CalibrationFigure;
  floor: number;
  blindWord: string;
  kind: 'pair_auc' | 'side_accuracy';
}

/** One figure's row: its name and value, the interval in words, then the scale with its marks. */
function renderRow(row: RowInput, top: number): string {
  const { figure, floor } = row;
  const reaches = reachesFloor(figure, floor);
  const trackY = top + 28;
  const parts = [
    textElement(0, top + TEXT, `${row.name} ${figure.value === null ? 'not measured' : two(figure.value)}`, { class: 'row-label' }),
    textElement(CHART_WIDTH, top + TEXT, figure.interval ? `CI ${two(figure.interval[0])}–${two(figure.interval[1])}` : 'no interval', {
      class: 'interval-label',
      'text-anchor': 'end',
    }),
    textElement(SCALE.left - 5, trackY + 4, '0', { class: 'tick', 'text-anchor': 'end' }),
    textElement(SCALE.right + 5, trackY + 4, '1', { class: 'tick' }),
    `<line class="track" x1="${SCALE.left}" y1="${trackY}" x2="${SCALE.right}" y2="${trackY}"/>`,
    `<line class="blind" x1="${scaleX(0.5)}" y1="${trackY - 8}" x2="${scaleX(0.5)}" y2="${trackY + 8}"/>`,
  ];
  if (figure.interval) {
    const [low, high] = [scaleX(figure.interval[0]), scaleX(figure.interval[1])];
    parts.push(`<rect class="interval" x="${low}" y="${trackY - 4}" width="${round(Math.max(high - low, 1))}" height="8" rx="4"/>`);
  }
  parts.push(`<line class="floor" x1="${scaleX(floor)}" y1="${trackY - 10}" x2="${scaleX(floor)}" y2="${trackY + 10}"/>`);
  if (figure.value !== null) {
    parts.push(`<circle class="estimate ${reaches ? 'reaches' : 'short'}" cx="${scaleX(figure.value)}" cy="${trackY}" r="5.5"/>`);
  }
  parts.push(referenceLabels(floor, row.blindWord, trackY + 21));
  return `<g class="figure" data-figure="${row.kind}" data-reaches-floor="${reaches}">${parts.join('')}</g>`;
}

/** A method's heading: its name (the verdict beside it when there is room), what it measures, the verdict in words. */
function renderHeading(method: string, passes: boolean, top: number): { svg: string; height: number } {
  const verdict = passes ? '✓ Passes the floor' : '✗ Below the floor';
  const verdictClass = `verdict ${passes ? 'passes' : 'fails'}`;
  const lineLength = Math.floor(CHART_WIDTH / (TEXT * BOLD_CHARACTER));
  const names = wrap(method, lineLength);
  const parts = names.map((line, index) => textElement(0, top + TEXT + index * HEADING_LINE, line, { class: 'method-name' }));
  let y = top + names.length * HEADING_LINE;
  if (fits(names.at(-1)!.length + verdict.length + 2, TEXT, BOLD_CHARACTER)) {
    parts.push(textElement(CHART_WIDTH, y - HEADING_LINE + TEXT, verdict, { class: verdictClass, 'text-anchor': 'end' }));
  } else {
    parts.push(textElement(0, y + TEXT, verdict, { class: verdictClass }));
    y += HEADING_LINE;
  }
  const description = methodDescription(method);
  for (const line of description ? wrap(description, Math.floor(CHART_WIDTH / (TEXT * CHARACTER))) : []) {
    parts.push(textElement(0, y + TEXT, line, { class: 'method-description' }));
    y += HEADING_LINE;
  }
  return { svg: parts.join(''), height: y - top };
}

/** One method's block: its heading and its two rows. Returns the SVG and its height. */
function renderMethod(method: string, figures: MethodCalibrationSummary, floor: CalibrationSummary['floor'], top: number): { svg: string; height: number } {
  const heading = renderHeading(method, figures.passes, top);
  let y = top + heading.height + 6;
  const rows = [
    renderRow({ name: 'Pair AUC', figure: figures.pair_auc, floor: floor.pair_auc, blindWord: 'blind', kind: 'pair_auc' }, y),
    renderRow({ name: 'Side accuracy', figure: figures.side_accuracy, floor: floor.side_accuracy, blindWord: 'chance', kind: 'side_accuracy' }, y + ROW_HEIGHT),
  ];
  y += 2 * ROW_HEIGHT;
  const svg = `<g class="method ${figures.passes ? 'passes' : 'fails'}" data-method="${escapeXml(method)}" data-passes="${figures.passes}">${heading.svg}${rows.join('')}</g>`;
  return { svg, height: y - top };
}

/** The key under the rows: what a filled dot, a hollow dot and the bar mean (the two lines are labelled where they stand). */
function renderLegend(top: number): { svg: string; height: number } {
  const keys = [
    ['<circle class="estimate reaches" cx="6" cy="-3.5" r="4.5"/>', 'estimate; interval low ≥ floor'],
    ['<circle class="estimate short" cx="6" cy="-3.5" r="4.5"/>', 'estimate; interval low < floor'],
    ['<rect class="interval" x="0" y="-7.5" width="14" height="8" rx="4"/>', '95 % interval (CI)'],
  ] as const;
  const lines = keys.map(([mark, text], index) => {
    const y = top + SMALL + index * 16;
    return `<g transform="translate(0 ${y})">${mark}</g>${textElement(20, y, text, { class: 'reference' })}`;
  });
  return { svg: `<g class="legend">${lines.join('')}</g>`, height: SMALL + (keys.length - 1) * 16 + 4 };
}

const joinNames = (names: string[]) => (names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`);

/** The plain sentence: does any method shown pass the floor, and which. */
export function calibrationSentence(passing: readonly string[], shown: readonly string[]): string {
  if (passing.length > 0) {
    return `This deployment's tiers are measured by an instrument that sees real splits: ${joinNames(passing.map(methodName))} ${passing.length === 1 ? 'passes' : 'pass'} the floor.`;
  }
  const below = shown.map(methodName);
  return `This deployment's tiers are not measured by an instrument that sees real splits: ${below.length === 0 ? 'no method is calibrated' : `${joinNames(below)} ${below.length === 1 ? 'is' : 'are'} below the floor`}.`;
}

/** What the 0.5 line means on each scale, said once under the figures. */
export const CHANCE_NOTE = 'On both scales 0.5 is blind: what an instrument that sees nothing scores by chance.';

/** One method's figures in words. */
export function calibrationFigureLine(method: string, figures: MethodCalibrationSummary, floor: CalibrationSummary['floor']): string {
  return `${methodName(method)}: pair AUC ${figureText(figures.pair_auc)}, side accuracy ${figureText(figures.side_accuracy)}; ${
    figures.passes ? 'passes' : 'below'
  } the floor (interval lows at least ${floor.pair_auc} and ${floor.side_accuracy}).`;
}

/** The chart and its plain-text alternative. */
export function calibrationChart(summary: CalibrationSummary, options: CalibrationChartOptions = {}): CalibrationChart {
  const names = options.methods ?? Object.keys(summary.methods);
  const shown = names.flatMap((method) => (summary.methods[method] ? [[method, summary.methods[method]] as const] : []));
  const passing = shown.filter(([, figures]) => figures.passes).map(([method]) => method);
  const sentence = calibrationSentence(
    passing,
    shown.map(([method]) => method),
  );
  const figures = shown.map(([method, methodFigures]) => ({ method, line: calibrationFigureLine(method, methodFigures, summary.floor) }));
  const id = (options.id ?? 'calibration').replace(/[^A-Za-z0-9_-]/g, '-');
  const blocks: string[] = [];
  let y = 0;
  for (const [method, methodFigures] of shown) {
    const block = renderMethod(method, methodFigures, summary.floor, y);
    blocks.push(block.svg);
    y += block.height + METHOD_GAP;
  }
  const legend = renderLegend(y);
  blocks.push(legend.svg);
  const height = round(y + legend.height);
  const title = `How well this deployment's instrument sees splits, measured on ${summary.records} records (${summary.date})`;
  const description = [sentence, ...figures.map((figure) => figure.line), CHANCE_NOTE].join(' ');
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="calibration-chart" viewBox="0 0 ${CHART_WIDTH} ${height}" role="img" aria-labelledby="${id}-title ${id}-desc">`,
    `<title id="${id}-title">${escapeXml(title)}</title>`,
    `<desc id="${id}-desc">${escapeXml(description)}</desc>`,
    ...blocks,
    `</svg>`,
  ].join('');
  return { svg, sentence, figures, passing };
}
