/**
 * Glyphs are retrieval modes, not authority (spec §1 rule 2). Each one changes how the
 * fast path retrieves and how a deliberation is framed; /api/info documents them.
 */
import { GLYPHS, type Glyph } from '../schemas/vocab.ts';

export interface GlyphMode {
  glyph: Glyph;
  name: string;
  mode: string;
  retrieval: string;
  deliberation: string;
}

export const GLYPH_MODES: Record<Glyph, GlyphMode> = {
  Ξ: {
    glyph: 'Ξ',
    name: 'Xi',
    mode: 'divergence',
    retrieval: 'Atlas records are weighted up (×1.25) so named cross-model splits come first.',
    deliberation: 'The panel is asked to name where it splits rather than to converge.',
  },
  Ψ: {
    glyph: 'Ψ',
    name: 'Psi',
    mode: 'self-reference',
    retrieval: 'Records written or answered by model voices are weighted up (×1.2).',
    deliberation: 'The panel is asked to reflect on its own position as models.',
  },
  '∅': {
    glyph: '∅',
    name: 'void',
    mode: 'void',
    retrieval: 'No corpus records are retrieved: a deliberate no-context baseline.',
    deliberation: 'The panel answers without the corpus.',
  },
  Ω: {
    glyph: 'Ω',
    name: 'Omega',
    mode: 'commit',
    retrieval: 'At most 3 records, and only close matches (similarity floor 0.4).',
    deliberation: 'The synthesis must commit to one answer and say what would change it.',
  },
  '∞': {
    glyph: '∞',
    name: 'infinity',
    mode: 'hold',
    retrieval: 'Twice the records and a lower similarity floor (0.2): a wider field.',
    deliberation: 'The synthesis keeps open tensions open instead of resolving them.',
  },
  Δ: {
    glyph: 'Δ',
    name: 'Delta',
    mode: 'repair',
    retrieval: 'Stale Atlas records (answered by retired model versions) are weighted down (×0.8); re-elicited ones up (×1.1).',
    deliberation: 'The panel is asked what earlier answers got wrong and how to repair them.',
  },
};

const GLYPH_SET = new Set<string>(GLYPHS);

export function isGlyph(value: string): value is Glyph {
  return GLYPH_SET.has(value);
}

export interface ParsedGlyphs {
  glyphs: Glyph[];
  cleanQuery: string;
}

/** Finds glyphs in the question (in order, once each) and removes them from the clean query. */
export function parseGlyphs(question: string): ParsedGlyphs {
  const glyphs: Glyph[] = [];
  let clean = '';
  for (const character of question) {
    if (isGlyph(character)) {
      if (!glyphs.includes(character)) glyphs.push(character);
      clean += ' ';
    } else {
      clean += character;
    }
  }
  return { glyphs, cleanQuery: clean.replace(/\s+/g, ' ').trim() };
}
