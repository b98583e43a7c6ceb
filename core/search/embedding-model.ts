/**
 * The model an embedder id names, without the arithmetic after `+` (`…+int8`, ADR 0021): a
 * build may embed passages with int8 products and the server its questions in float32, the
 * same model's vectors within the ADR's tolerance; another model's are not comparable.
 */
export function embeddingModel(id: string): string {
  return id.split('+')[0]!;
}
