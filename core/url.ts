/** Percent-encodes a query value; lone surrogates (which encodeURIComponent rejects) become U+FFFD. */
export function encodeParam(value: string): string {
  return encodeURIComponent(value.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'));
}
