/**
 * Splits a work's plain text into passages at sentence ends. A text of at most `maxWords`
 * words stays whole (a single argument or note is one passage); a longer one is cut into
 * passages of about `targetWords` words, balanced so no short remainder is left alone. A
 * sentence longer than `maxWords` is cut into windows of `targetWords` words.
 */
export function chunkText(text: string, targetWords = 160, maxWords = 240): string[] {
  const sentences =
    text
      .match(/[^.!?\n]+(?:[.!?]+|\n|$)/g)
      ?.map((sentence) => sentence.trim())
      .filter(Boolean) ?? [];
  const wordsOf = sentences.map((sentence) => sentence.split(/\s+/).length);
  const total = wordsOf.reduce((sum, count) => sum + count, 0);
  if (sentences.length === 0) return [text.trim()].filter(Boolean);
  if (total <= maxWords) return [sentences.join(' ')];

  const chunks: string[] = [];
  let current: string[] = [];
  let words = 0;
  let remaining = total;
  const flush = () => {
    if (current.length > 0) chunks.push(current.join(' '));
    remaining -= words;
    current = [];
    words = 0;
  };
  sentences.forEach((sentence, index) => {
    const sentenceWords = wordsOf[index]!;
    if (sentenceWords > maxWords) {
      flush();
      const parts = sentence.split(/\s+/);
      for (let start = 0; start < parts.length; start += targetWords) chunks.push(parts.slice(start, start + targetWords).join(' '));
      remaining -= sentenceWords;
      return;
    }
    // The goal size spreads what is left evenly over the passages it needs.
    const goal = remaining / Math.max(1, Math.round(remaining / targetWords));
    if (current.length > 0 && (words + sentenceWords > maxWords || words + sentenceWords / 2 > goal)) flush();
    current.push(sentence);
    words += sentenceWords;
  });
  flush();
  return chunks;
}
