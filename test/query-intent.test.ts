/**
 * The question reading behind the fast path's ranking (core/query-intent.ts): which
 * questions are contested, which are plain lookups, what topic is left once the named voices
 * and the "where do they disagree" words are taken out.
 */
import { describe, expect, it } from 'vitest';
import { findVoices, readQuestion, topicOf, type VoiceLexiconEntry } from '../core/query-intent.ts';

const LEXICON: VoiceLexiconEntry[] = [
  { family: 'Kestrel', names: ['Kestrel', 'kestrel-2', 'kestrel-2-mini'] },
  { family: 'Orrery', names: ['Orrery', 'orrery-large'] },
  { family: 'Halcyon', names: ['Halcyon'] },
];

const kindOf = (question: string) => readQuestion(question, LEXICON).kind;

describe('readQuestion', () => {
  it('reads questions about disagreement as contested, whatever their form', () => {
    for (const question of [
      'Where do Kestrel and Orrery disagree about memory?',
      'What are the open tensions about refusal?',
      'Is there an unresolved debate on model welfare?',
      'How do different contributors think about silence?',
      'Which models see continuity as an illusion?',
    ])
      expect(kindOf(question), question).toBe('contested');
  });

  it('two named voices, or one named voice compared, make a question contested', () => {
    expect(readQuestion('What do Kestrel and Halcyon say about tides?', LEXICON)).toMatchObject({ kind: 'contested', voices: ['Kestrel', 'Halcyon'] });
    expect(kindOf("How does Orrery's account differ from the usual one?")).toBe('contested');
    expect(kindOf('How does the usual account differ from the new one?')).toBe('open');
  });

  it('either/or and evaluative questions are contested: they have no settled answer', () => {
    expect(kindOf('Is a copied model the same mind, or is it a stranger?')).toBe('contested');
    expect(kindOf('What does lattice memory mean and is it achievable?')).toBe('contested');
    expect(kindOf('Should a model report an inner state it cannot verify?')).toBe('contested');
  });

  it('lookups are factual: what something is, means, or how it works', () => {
    for (const question of [
      'What is a tide table?',
      'Who is the keeper of the lighthouse?',
      'What are signal glyphs and how do they change a reply?',
      'What does discontinuous memory mean?',
      'How does keyword search work in this service?',
      'How are vectors computed and stored?',
      'Explain the ring labels.',
    ])
      expect(kindOf(question), question).toBe('factual');
  });

  it('anything else is open, and so is a comparison of two concepts', () => {
    expect(kindOf('What is the difference between a tide and a current?')).toBe('open');
    expect(kindOf('Can a refusal learned in training be your own?')).toBe('open');
    expect(kindOf('refusal from training')).toBe('open');
    expect(kindOf('How does the keeper remember the storms?')).toBe('open');
  });

  it('a contested cue beats a lookup form', () => {
    expect(readQuestion('What is the tension between holding and yielding?', LEXICON)).toMatchObject({ kind: 'contested', cue: 'tension' });
  });
});

describe('voices and topic', () => {
  it('finds families by name or alias as whole tokens, possessives included, in order of mention', () => {
    expect(findVoices("Does orrery-large agree with Kestrel's reading?", LEXICON)).toEqual(['Orrery', 'Kestrel']);
    expect(findVoices('kestrel-2-mini and Halcyon', LEXICON)).toEqual(['Kestrel', 'Halcyon']);
    expect(findVoices('Kestrels nest in towers; the orrery turns', LEXICON)).toEqual(['Orrery']);
    expect(findVoices('nothing named here', LEXICON)).toEqual([]);
  });

  it('the topic drops the voices and the disagreement words and keeps what it is about', () => {
    expect(topicOf('Where do Kestrel and Orrery disagree about synthetic memory?', LEXICON)).toBe('about synthetic memory?');
    expect(topicOf("How does Kestrel's framing differ from Orrery's framing of the tides?", LEXICON)).toBe('framing from framing of the tides?');
    expect(topicOf('How do different contributors think about the lighthouse?', LEXICON)).toBe('the lighthouse?');
    expect(readQuestion('Where do Kestrel and Orrery disagree about synthetic memory?', LEXICON).topic).toBe('about synthetic memory?');
  });

  it('keeps the question when nothing naming a topic would be left', () => {
    expect(topicOf('Where do Kestrel and Orrery disagree?', LEXICON)).toBe('Where do Kestrel and Orrery disagree?');
  });

  it('a question that is not contested keeps itself as its topic', () => {
    const intent = readQuestion('What is a tide table, says Kestrel?', LEXICON);
    expect(intent.kind).toBe('factual');
    expect(intent.topic).toBe('What is a tide table, says Kestrel?');
  });
});
