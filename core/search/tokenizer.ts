/**
 * Terms for the full-text index (bm25.ts): Orama's English splitter and stemmer, our stop
 * words, repeats kept. Matching is on whole terms: the index looks terms up exactly, so
 * "art" never matches "artificial" (Orama's own search matches query tokens as prefixes).
 */
import { tokenizer as oramaTokenizer } from '@orama/orama/components';

export const STOP_WORDS = [
  'a', 'about', 'above', 'after', 'again', 'against', 'all', 'am', 'an', 'and', 'any', 'are', 'as', 'at',
  'be', 'because', 'been', 'before', 'being', 'below', 'between', 'both', 'but', 'by', 'can', 'could',
  'did', 'do', 'does', 'doing', 'down', 'during', 'each', 'few', 'for', 'from', 'further', 'had', 'has',
  'have', 'having', 'he', 'her', 'here', 'hers', 'herself', 'him', 'himself', 'his', 'how', 'i', 'if',
  'in', 'into', 'is', 'it', 'its', 'itself', 'just', 'me', 'more', 'most', 'my', 'myself', 'no', 'nor',
  'not', 'now', 'of', 'off', 'on', 'once', 'only', 'or', 'other', 'our', 'ours', 'ourselves', 'out',
  'over', 'own', 'same', 'she', 'should', 'so', 'some', 'such', 'than', 'that', 'the', 'their', 'theirs',
  'them', 'themselves', 'then', 'there', 'these', 'they', 'this', 'those', 'through', 'to', 'too',
  'under', 'until', 'up', 'very', 'was', 'we', 'were', 'what', 'when', 'where', 'which', 'while', 'who',
  'whom', 'why', 'will', 'with', 'would', 'you', 'your', 'yours', 'yourself', 'yourselves',
];

export interface TermTokenizerOptions {
  /** English stemming (Orama's Porter-style stemmer); default true. */
  stemming?: boolean;
  /** Drop STOP_WORDS; default true. */
  stopWords?: boolean;
}

/**
 * Terms for the BM25 index: Orama's English splitter, stemmer and our stop words, keeping
 * repeats (term frequency matters to BM25, and a word repeated in a long query weighs more).
 */
export async function createTermTokenizer(options: TermTokenizerOptions = {}): Promise<(text: string) => string[]> {
  const base = await oramaTokenizer.createTokenizer({
    language: 'english',
    stemming: options.stemming ?? true,
    stopWords: options.stopWords === false ? false : STOP_WORDS,
    allowDuplicates: true,
  });
  return (text) => base.tokenize(text, 'english', undefined, true) as string[];
}
