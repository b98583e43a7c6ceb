/**
 * Full-text tokenizer for the Orama index. Orama 3.1 matches query tokens as prefixes
 * ("art" finds "artificial"), which floods long natural-language questions with noise.
 * Each token gets a terminator, so a token can only prefix-match itself: whole-word
 * matching with Orama's own BM25, English stemming and our stop words.
 */
import { tokenizer as oramaTokenizer } from '@orama/orama/components';
import type { Tokenizer } from '@orama/orama';

const TERMINATOR = '\u0003';

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

export async function createWholeWordTokenizer(): Promise<Tokenizer> {
  const base = await oramaTokenizer.createTokenizer({ language: 'english', stemming: true, stopWords: STOP_WORDS });
  return {
    language: base.language,
    normalizationCache: base.normalizationCache,
    tokenize(raw, language, prop, withCache) {
      return base.tokenize(raw, language, prop, withCache).map((token) => token + TERMINATOR);
    },
  };
}
