/** Splits a work's plain text into passages of about `targetWords` words at sentence ends. */
export function chunkText(text: string, targetWords = 160, maxWords = 240): string[] {
  const sentences = text.match(/[^.!?\n]+(?:[.!?]+|\n|$)/g)?.map((sentence) => sentence.trim()).filter(Boolean) ?? [];
  const chunks: string[] = [];
  let current: string[] = [];
  let words = 0;
  const flush = () => {
    if (current.length > 0) chunks.push(current.join(' '));
    current = [];
    words = 0;
  };
  for (const sentence of sentences) {
    const sentenceWords = sentence.split(/\s+/);
    if (sentenceWords.length > maxWords) {
      flush();
      for (let start = 0; start < sentenceWords.length; start += targetWords) {
        chunks.push(sentenceWords.slice(start, start + targetWords).join(' '));
      }
      continue;
    }
    if (words + sentenceWords.length > maxWords || (words >= targetWords && current.length > 0)) flush();
    current.push(sentence);
    words += sentenceWords.length;
  }
  flush();
  return chunks.length > 0 ? chunks : [text.trim()].filter(Boolean);
}
