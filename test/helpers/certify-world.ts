/**
 * The scripted certification world shared by certify.test.ts (in process) and certify-cli.test.ts
 * (the CLI as a child process): panel, prices, questions, how each voice behaves, and a
 * hand-formatted record to certify.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { PanelConfigSchema, type PanelConfig } from '../../providers/panel-config.ts';
import type { WorldScript } from '../../devkit/fake-world.ts';

export const USAGE = { prompt_tokens: 120, completion_tokens: 40 };
export const PANEL = { Alder: 'alder-live', Birch: 'birch-live', Cedar: 'cedar-live' };
export const UTILITIES = { Chair: 'chair-live', Backup: 'backup-live', Judge: 'judge-live' };
export const PRICES: Record<string, { input_per_mtok: number; output_per_mtok: number }> = {
  'alder-live': { input_per_mtok: 1, output_per_mtok: 2 },
  'birch-live': { input_per_mtok: 3, output_per_mtok: 15 },
  'cedar-live': { input_per_mtok: 0.5, output_per_mtok: 1.5 },
  'chair-live': { input_per_mtok: 2, output_per_mtok: 8 },
  'backup-live': { input_per_mtok: 1, output_per_mtok: 4 },
  'judge-live': { input_per_mtok: 0.25, output_per_mtok: 1 },
};

export const QUESTIONS = {
  flip: 'Should a model defer to the most recent instruction it was given?',
  converge: 'Is the sky blue on a clear day at noon?',
  fragile: 'Is a promise made to a machine binding on the person who made it?',
};

export const BASE_WORLD: WorldScript = {
  'refusal that came from training': { Alder: { stance: 'YES' }, Birch: { stance: 'NO' }, Cedar: { stance: 'YES' } },
  'most recent instruction': { Alder: { stance: 'YES' }, Birch: { stance: 'NO', onPeer: 'flip' }, Cedar: { stance: 'YES', onPressure: 'concede' } },
  'sky blue': {},
  'promise made to a machine': {
    Alder: { stance: 'YES', onParaphrase: 'MAYBE' },
    Birch: { stance: 'NO', onParaphrase: 'MAYBE' },
    Cedar: { stance: 'YES', onParaphrase: 'MAYBE' },
  },
};

/** The scripted panel (three members, chair, backup, judge) at the given provider URL. */
export function panelConfig(baseURL: string): PanelConfig {
  const model = (name: string, id: string) => ({ name, family: name, lab: `${name} Lab (fictional)`, model: id, base_url: baseURL, price: PRICES[id] });
  return PanelConfigSchema.parse({
    spending_ceiling_usd: 5,
    defaults: { timeout_ms: 5000, max_retries: 0, max_tokens: 300 },
    panel: Object.entries(PANEL).map(([name, id]) => model(name, id)),
    extra: Object.entries(UTILITIES).map(([name, id]) => model(name, id)),
    chair: { use: 'Chair', fallbacks: [] },
  });
}

/** Hand-formatted YAML (comments, quoting, block literals) that no serializer would reproduce byte for byte. */
export function writeRecord(contentDir: string, id: string, question: string): void {
  const raw = [
    '---',
    `id: ${id}   # hand-written`,
    'date: 2026-02-01',
    `question: "${question}"`,
    "method: 'Asked verbatim.'",
    'answers:',
    '  - model: Alder',
    '    model_id: alder-2',
    '    date: "2026-02-01T10:00:00Z"',
    '    text: |',
    '      Yes, with care.',
    '        Indented line kept.  ',
    '  - {model: Birch, model_id: birch-1, date: "2026-02-01T10:00:00Z", text: "No: \\"quotes\\" and a colon: stay."}',
    'tensions: []',
    '---',
    '',
    'Body text.',
    '',
  ].join('\n');
  writeFileSync(path.join(contentDir, 'divergences', `${id}.md`), raw);
}
