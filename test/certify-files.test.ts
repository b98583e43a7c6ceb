/** The certification's files and arguments: the block writer, the evidence log, the CLI's options. */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EvidenceCall } from '../schemas/certification.ts';
import type { Certification } from '../schemas/content.ts';
import { PanelConfigSchema } from '../providers/panel-config.ts';
import { parseCertifyArgs, UsageError } from '../scripts/lib/certify/cli-args.ts';
import { certifyPanel, JUDGE_MAX_TOKENS } from '../scripts/lib/certify/panel.ts';
import { appendEvidence, EvidenceLogError, loggedCalls, readEvidence, reusableCall } from '../content-files/evidence-log.ts';
import { createLimiter, createLocalSpendGuard, SpendCeilingError } from '../scripts/lib/certify/spend-guard.ts';
import { ContentError } from '../content-files/issues.ts';
import { loadContent } from '../content-files/load-content.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { BlockWriteError, replaceCertificationBlock } from '../scripts/lib/certify/write-block.ts';

const record = (certification: string) =>
  [
    '---',
    'id: TST-D9',
    'date: 2026-01-01',
    'question: "Q?"',
    'method: m',
    ...(certification ? [certification] : []),
    're_elicits: TST-D1',
    'answers:',
    '  - {model: A, model_id: a-1, date: "2026-01-01", text: "x"}',
    '  - {model: B, model_id: b-1, date: "2026-01-01", text: "y"}',
    '---',
    '',
    'Body.',
    '',
  ].join('\n');

describe('certification block writer', () => {
  it('replaces a multi-line block in place, comments and all, and leaves the next key alone', () => {
    const raw = record('certification:   # by hand\n  tier: C1\n\n  dri: 1.2   # guessed');
    const next = replaceCertificationBlock(raw, { tier: 'C3', dri: 2.5, agreement: null }, 'TST');
    expect(next).toBe(record('certification:\n  tier: C3\n  dri: 2.5\n  agreement: null'));
  });

  it('inserts the block before answers when the record has none', () => {
    const next = replaceCertificationBlock(record(''), { tier: 'C0', dri: 0.3 }, 'TST');
    expect(next).toBe(record('').replace('re_elicits: TST-D1\n', 're_elicits: TST-D1\ncertification:\n  tier: C0\n  dri: 0.3\n'));
  });

  it('for any block and any verbatim answer text, only the block changes', () => {
    const block = fc.record(
      {
        tier: fc.constantFrom('C0', 'C1', 'C2', 'C3'),
        dri: fc.double({ min: 0, max: 1000, noNaN: true }),
        split_persistence: fc.double({ min: 0, max: 1, noNaN: true }),
        flips: fc.nat(9),
        agreement: fc.option(fc.double({ min: 0, max: 1, noNaN: true })),
        judges: fc.array(
          fc.string({ minLength: 1 }).filter((name) => name.trim() === name && name !== ''),
          { maxLength: 3 },
        ),
      },
      { requiredKeys: ['tier'] },
    );
    const answer = fc.string({ unit: 'grapheme', minLength: 1 }).filter((value) => value.trim() !== '');
    fc.assert(
      fc.property(block, answer, fc.boolean(), (certification, text, hadBlock) => {
        const raw = [
          '---',
          'id: TST-D9',
          'date: 2026-01-01',
          'question: "Q?"',
          'method: m',
          ...(hadBlock ? ['certification:', '  tier: C1'] : []),
          'answers:',
          `  - {model: A, model_id: a-1, date: "2026-01-01", text: ${JSON.stringify(text)}}`,
          '  - model: B',
          '    model_id: b-1',
          '    date: "2026-01-01"',
          `    text: ${JSON.stringify(text)}`,
          '---',
          '',
          'Body.',
          '',
        ].join('\n');
        const next = replaceCertificationBlock(raw, certification as Certification, 'TST');
        const outside = (value: string) => value.replace(/^certification:.*\n(?:[ \t].*\n)*/m, '');
        return outside(next) === outside(raw);
      }),
      { numRuns: 150 },
    );
  });

  it('refuses a block the schema rejects, and files without frontmatter', () => {
    expect(() => replaceCertificationBlock(record(''), { tier: 'C3', split_persistence: 2 }, 'TST')).toThrow(BlockWriteError);
    expect(() => replaceCertificationBlock('no frontmatter', { tier: 'C3' }, 'TST')).toThrow(BlockWriteError);
  });
});

const call = (key: string, methodVersion = 'perturbation-v1'): EvidenceCall => ({
  kind: 'call',
  key,
  subject: 'TST-D9',
  run: 0,
  step: 'control',
  model: 'A',
  model_id: 'a-1',
  messages: [{ role: 'user', content: 'Q?' }],
  answer: 'verbatim\u0000 answer ✓',
  usage: { prompt_tokens: 3, completion_tokens: 4 },
  cost_usd: 0.001,
  method_version: methodVersion,
  at: '2026-11-24T12:00:00Z',
});

describe('evidence log', () => {
  it('appends lines that read back verbatim; a torn last line (a crash mid-write) is skipped', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'certify-log-'));
    try {
      const file = path.join(dir, 'divergences', 'TST-D9.certification.jsonl');
      appendEvidence(file, call('k1'));
      appendEvidence(file, call('k2', 'older-method'));
      appendFileSync(file, '{"kind":"call","key":"k3","sub');
      expect(readEvidence(file).map((line) => (line.kind === 'call' ? line.answer : ''))).toEqual(['verbatim\u0000 answer ✓', 'verbatim\u0000 answer ✓']);
      const logged = loggedCalls([file, file], 'perturbation-v1');
      expect([...logged.keys()]).toEqual(['k1']);
      expect(reusableCall(logged.get('k1'), 'a-1', [{ role: 'user', content: 'Q?' }])?.key).toBe('k1');
      expect(reusableCall(logged.get('k1'), 'a-2', [{ role: 'user', content: 'Q?' }])).toBeUndefined();
      expect(reusableCall(logged.get('k1'), 'a-1', [{ role: 'user', content: 'Q? ' }])).toBeUndefined();
      writeFileSync(file, `${readFileSync(file, 'utf8')}\n{"kind":"call"}\n`);
      expect(() => readEvidence(file)).toThrow(EvidenceLogError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to append a line the schema rejects', () => {
    expect(() => appendEvidence(path.join(os.tmpdir(), 'never.certification.jsonl'), { ...call('k'), cost_usd: -1 })).toThrow();
  });
});

describe('content validation of evidence logs', () => {
  it('accepts valid logs beside records, names a torn line, a bad line and evidence for no record', () => {
    const dir = writeFixtureContent();
    try {
      appendEvidence(path.join(dir, 'divergences', 'TST-D1.certification.jsonl'), call('k1'));
      appendEvidence(path.join(dir, 'divergences', 'negative-controls.certification.jsonl'), call('k2'));
      expect(loadContent(dir).divergences).toHaveLength(2);
      appendFileSync(path.join(dir, 'divergences', 'TST-D1.certification.jsonl'), '{"kind":');
      writeFileSync(path.join(dir, 'divergences', 'TST-D8.certification.jsonl'), '');
      writeFileSync(path.join(dir, 'divergences', 'TST-D2.certification.jsonl'), '{"kind":"result"}\n');
      let error: unknown;
      try {
        loadContent(dir);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ContentError);
      const message = (error as Error).message;
      expect(message).toMatch(/TST-D1\.certification\.jsonl.*torn line/);
      expect(message).toMatch(/TST-D8\.certification\.jsonl.*not a divergence record/);
      expect(message).toMatch(/TST-D2\.certification\.jsonl: line 1: subject/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('spend guard and limiter', () => {
  it('reserves the worst case, settles the real cost, refuses a call that could cross the ceiling', () => {
    const guard = createLocalSpendGuard(1);
    const first = guard.reserve(0.6);
    expect(() => guard.reserve(0.5)).toThrow(SpendCeilingError);
    first.settle(0.2);
    first.settle(0.9); // settling twice counts once
    expect(guard.spentUsd()).toBeCloseTo(0.2, 12);
    guard.reserve(0.8).release();
    expect(() => guard.reserve(0.81)).toThrow(SpendCeilingError);
  });

  it('never runs more than its limit at once', async () => {
    const limit = createLimiter(2);
    let active = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 9 }, () =>
        limit(async () => {
          active++;
          peak = Math.max(peak, active);
          await new Promise((resolve) => setImmediate(resolve));
          active--;
        }),
      ),
    );
    expect(peak).toBe(2);
  });
});

describe('certification panel', () => {
  const model = (name: string) => ({ name, family: name, lab: 'L', model: `${name.toLowerCase()}-1`, base_url: 'http://127.0.0.1:9/v1' });
  const config = (extra: string[]) => PanelConfigSchema.parse({ panel: ['A', 'B'].map(model), extra: extra.map(model), chair: { use: 'A' } });

  it('judges and the paraphraser come from extra, never from the panel under test', () => {
    const chosen = certifyPanel(config(['J1', 'J2']), {});
    expect(chosen.panel.map((m) => m.name)).toEqual(['A', 'B']);
    expect(chosen.judges.map((m) => [m.name, m.maxTokens])).toEqual([
      ['J1', JUDGE_MAX_TOKENS],
      ['J2', JUDGE_MAX_TOKENS],
    ]);
    expect(chosen.paraphraser.name).toBe('J1');
    expect(certifyPanel(config(['J1', 'J2']), {}, { judges: ['J2'], paraphraser: 'J2' }).judges.map((m) => m.name)).toEqual(['J2']);
    expect(() => certifyPanel(config([]), {})).toThrow(/extra/);
    expect(() => certifyPanel(config(['J1']), {}, { judges: ['A'] })).toThrow(/sits on the panel/);
    expect(() => certifyPanel(config(['J1']), {}, { paraphraser: 'Nobody' })).toThrow(/not a model/);
  });
});

describe('npm run certify arguments', () => {
  it('reads ids, flags and numbers', () => {
    const args = parseCertifyArgs(['PLY-D1', 'PLY-D2', '--runs', '3', '--t', '5', '--k', '2', '--write', '--judges', 'X, Y']);
    expect(args.selection.ids).toEqual(['PLY-D1', 'PLY-D2']);
    expect(args.settings).toMatchObject({ runs: 3, t: 5, k: 2 });
    expect(args).toMatchObject({ write: true, plan: false, judges: ['X', 'Y'] });
    expect(parseCertifyArgs(['--tier', 'C0']).selection.tier).toBe('C0');
    expect(parseCertifyArgs(['--all', '--attempt', '2026-12']).attempt).toBe('2026-12');
  });

  it.each([
    [[], /exactly one/],
    [['--all', 'PLY-D1'], /exactly one/],
    [['--tier', 'C9'], /--tier/],
    [['--all', '--t', '1'], /--t must be/],
    [['--all', '--runs', '2.5'], /--runs must be/],
    [['--all', '--plan', '--write'], /--plan/],
    [['--all', '--budget', '-3'], /--budget/],
    [['--all', '--bogus'], /bogus/],
    [['--all', '--attempt', 'Bad Name'], /--attempt/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseCertifyArgs(argv)).toThrow(UsageError);
    expect(() => parseCertifyArgs(argv)).toThrow(message);
  });
});
