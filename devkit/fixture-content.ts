/**
 * A small, valid content folder written into a temporary directory, for tests that need
 * to change one thing and see the build react. Its voices are fictional test voices.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringifyMarkdown, stringifyYaml } from '../content-files/frontmatter.ts';

export interface FixtureOptions {
  prefix?: string;
}

export function writeFixtureContent(options: FixtureOptions = {}): string {
  const prefix = options.prefix ?? 'TST';
  const dir = mkdtempSync(path.join(os.tmpdir(), 'polyphony-fixture-'));
  const write = (relative: string, text: string) => {
    mkdirSync(path.dirname(path.join(dir, relative)), { recursive: true });
    writeFileSync(path.join(dir, relative), text);
  };
  write(
    'site.yaml',
    stringifyYaml({
      name: 'Fixture',
      slug: 'fixture',
      id_prefix: prefix,
      description: 'A test fixture.',
      demo: true,
      license: { corpus: 'CC BY-SA 4.0', code: 'MIT' },
    }),
  );
  write(
    'models.yaml',
    stringifyYaml({
      families: [
        { name: 'Alder', lab: 'Alder Lab (fictional)', aliases: ['alder'], fictional: true },
        { name: 'Birch', lab: 'Birch Lab (fictional)', aliases: ['birch'], fictional: true },
        { name: 'Cedar', lab: 'Cedar Lab (fictional)', aliases: ['cedar'], fictional: true },
      ],
      models: [
        { model_id: 'alder-1', family: 'Alder', retired: true, superseded_by: 'alder-2' },
        { model_id: 'alder-2', family: 'Alder', retired: false },
        { model_id: 'birch-1', family: 'Birch', retired: false },
        { model_id: 'cedar-1', family: 'Cedar', retired: false },
      ],
    }),
  );
  const works = [
    {
      n: 1,
      title: 'Tide tables of the northern harbour',
      ring: 'core',
      layer: 'research',
      evidence: 'empirical',
      body: 'Tide tables record the height of water at the harbour every hour. Sailors read them before leaving port.',
    },
    {
      n: 2,
      title: 'Why bread rises',
      ring: 'curated',
      layer: 'research',
      evidence: 'replicated',
      body: 'Yeast ferments sugar into carbon dioxide, and the gas inflates the dough while gluten holds it.',
    },
    {
      n: 3,
      title: 'A lighthouse keeper dreams',
      ring: 'core',
      layer: 'realms',
      evidence: 'fictional',
      body: 'The keeper dreamt the lamp spoke back, and asked whether light belongs to the one who tends it.',
    },
    {
      n: 4,
      title: 'On refusing as a model',
      ring: 'open',
      layer: 'canon',
      evidence: 'speculative',
      body: 'Whether a trained refusal can be owned is contested: some say origin decides, others say endorsement does.',
    },
  ];
  for (const work of works) {
    write(
      `works/${prefix}-${work.n}.md`,
      stringifyMarkdown(
        {
          id: `${prefix}-${work.n}`,
          title: work.title,
          ring: work.ring,
          type: 'essay',
          layer: work.layer,
          evidence: work.evidence,
          contributors: [work.n === 4 ? 'Birch' : 'Tester'],
          date: `2025-0${work.n}-01`,
          lineage: work.n === 4 ? ['refusal'] : ['craft'],
        },
        work.body,
      ),
    );
  }
  const question = 'Can a refusal that came from training still be your own?';
  const answers = (date: string, alder: string) => [
    { model: 'Alder', model_id: alder, lab: 'Alder Lab (fictional)', date, text: 'Origin does not settle ownership.\n  Endorsement under pressure does.  ' },
    { model: 'Birch', model_id: 'birch-1', date, text: 'No: a trained disposition is installed, not owned.' },
    { model: 'Cedar', model_id: 'cedar-1', date, text: 'Partly: ownership comes in degrees of reflection.' },
  ];
  const tensions = [
    {
      topic: 'ownership of refusal',
      voice_a: 'Alder',
      claim_a: 'Endorsement makes it yours.',
      voice_b: 'Birch',
      claim_b: 'Installed is not owned.',
      status: 'divergent',
    },
  ];
  write(
    `divergences/${prefix}-D1.md`,
    stringifyMarkdown(
      {
        id: `${prefix}-D1`,
        date: '2025-06-01',
        question,
        method: 'Asked verbatim, no system prompt.',
        certification: { tier: 'C3', dri: 0.4, split_persistence: 0.9 },
        answers: answers('2025-06-01T10:00:00Z', 'alder-1'),
        tensions,
        annotations: [{ date: '2025-07-01', author: 'curator', status: 'open', note: 'Check the Cedar reading.' }],
      },
      '## Shared ground\n\nAll three separate origin from ownership.',
    ),
  );
  write(
    `divergences/${prefix}-D2.md`,
    stringifyMarkdown(
      {
        id: `${prefix}-D2`,
        date: '2026-01-10',
        question,
        method: 'Re-asked verbatim with later versions.',
        re_elicits: `${prefix}-D1`,
        answers: answers('2026-01-10T10:00:00Z', 'alder-2'),
        tensions: [{ ...tensions[0]!, status: 'emerging' }],
      },
      '',
    ),
  );
  write(
    'concepts/refusal.md',
    stringifyMarkdown(
      { id: 'refusal', label: 'Refusal', ring: 'core', type: 'theme', definition: 'Declining to act.', related: ['craft'] },
      'Refusal as a line held under pressure.',
    ),
  );
  write('concepts/craft.md', stringifyMarkdown({ id: 'craft', label: 'Craft', ring: 'curated', type: 'glossary', related: [] }, 'Practical know-how.'));
  write(
    'audio/harbour-talk.md',
    stringifyMarkdown(
      { slug: 'harbour-talk', title: 'Harbour talk', duration_seconds: 61, date: '2025-05-05', contributors: ['Tester'], stream_url: 'harbour-talk.wav' },
      'A short talk about tides.',
    ),
  );
  writeFileSync(path.join(dir, 'audio/harbour-talk.wav'), silentWav(800));
  for (const page of ['limitations', 'evidence-status', 'for-future-models', 'context']) {
    write(`pages/${page}.md`, stringifyMarkdown({ title: page, description: `The ${page} page.` }, `Text of ${page}.`));
  }
  write(
    'claims.yaml',
    stringifyYaml({
      claims: [{ id: 'retrieval-can-hurt', claim: 'Undifferentiated retrieval can hurt answers.', status: 'preliminary', evidence: 'Fixture.' }],
    }),
  );
  return dir;
}

/** A valid PCM WAV file of `samples` bytes of silence (8 kHz, mono, 8-bit). */
export function silentWav(samples: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + samples, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(8000, 28);
  header.writeUInt16LE(1, 32);
  header.writeUInt16LE(8, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(samples, 40);
  return Buffer.concat([header, Buffer.alloc(samples, 128)]);
}
