import { describe, expect, it } from 'vitest';
import { createHashedEmbedder, features } from '../devkit/hashed-embedder.ts';
import { testEmbedderKind } from '../devkit/app.ts';

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
const norm = (a: Float32Array) => Math.sqrt(dot(a, a));

describe('the stand-in embedder of the fast lane', () => {
  it('gives the same vector for the same text, across calls and across instances', async () => {
    const one = createHashedEmbedder();
    const [a, b] = await one.embed(['Can machines be conscious?', 'Can machines be conscious?']);
    const [c] = await createHashedEmbedder().embed(['Can machines be conscious?']);
    expect(Array.from(a!)).toEqual(Array.from(b!));
    expect(Array.from(a!)).toEqual(Array.from(c!));
  });

  it('returns one L2-normalised vector of `dims` floats per text, in order, empty text included', async () => {
    const embedder = createHashedEmbedder(64);
    const texts = ['first', '', '!!!', 'a much longer text about epistemic rings and their keepers'];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(texts.length);
    for (const vector of vectors) {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector.length).toBe(64);
      expect(norm(vector)).toBeCloseTo(1, 5);
    }
    expect(Array.from(vectors[0]!)).not.toEqual(Array.from(vectors[3]!));
    expect(embedder.dims).toBe(64);
    expect(embedder.id).toContain('64');
  });

  it('puts related texts closer than unrelated ones', async () => {
    const [question, related, inflected, unrelated] = await createHashedEmbedder().embed([
      'Can a language model be conscious?',
      'Whether language models are conscious is contested.',
      'consciousness of models',
      'Sourdough bread needs a long, cold fermentation.',
    ]);
    expect(dot(question!, related!)).toBeGreaterThan(dot(question!, unrelated!));
    // Character trigrams carry stems: "conscious" and "consciousness", "model" and "models".
    expect(dot(question!, inflected!)).toBeGreaterThan(dot(question!, unrelated!));
    expect(dot(question!, unrelated!)).toBeLessThan(0.2);
  });

  it('ignores case and Unicode compatibility forms, and keeps stopwords light', () => {
    expect(features('The ＭＯＤＥＬ')).toEqual(features('the model'));
    const weights = new Map(features('the model'));
    expect(weights.get('w:the')).toBeLessThan(weights.get('w:model')!);
  });

  it('refuses a dimension that is not a positive integer', () => {
    expect(() => createHashedEmbedder(0)).toThrow(/positive integer/);
    expect(() => createHashedEmbedder(1.5)).toThrow(/positive integer/);
  });
});

describe('TEST_EMBEDDER', () => {
  it('is the real model unless the lane asks for the stand-in, and refuses anything else', () => {
    expect(testEmbedderKind({})).toBe('use-lite');
    expect(testEmbedderKind({ TEST_EMBEDDER: 'use-lite' })).toBe('use-lite');
    expect(testEmbedderKind({ TEST_EMBEDDER: 'hashed' })).toBe('hashed');
    expect(() => testEmbedderKind({ TEST_EMBEDDER: 'bert' })).toThrow(/use-lite or hashed/);
  });
});
