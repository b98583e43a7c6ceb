/**
 * The one rule for text that a write keeps: well-formed Unicode without NUL. A lone UTF-16
 * surrogate has no UTF-8 form (PostgreSQL rejects it in JSON, and a driver that encodes it
 * silently stores U+FFFD instead), and NUL is refused by PostgreSQL text and JSON while
 * SQLite keeps it: without one rule the same request would get different answers per driver.
 */

export interface IllFormedText {
  /** Where the string is, e.g. "body.answer", "body.sources[1]", "query.q"; "(key)" marks a key. */
  field: string;
  problem: 'nul' | 'lone_surrogate';
  /** UTF-16 index of the offending code unit in that string. */
  index: number;
  /** The code point, e.g. "U+0000" or "U+D800". */
  character: string;
}

function problemIn(text: string): Pick<IllFormedText, 'problem' | 'index' | 'character'> | undefined {
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit === 0) return { problem: 'nul', index, character: 'U+0000' };
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const next = text.charCodeAt(index + 1);
    if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      index++;
      continue;
    }
    return { problem: 'lone_surrogate', index, character: `U+${unit.toString(16).toUpperCase()}` };
  }
  return undefined;
}

const join = (field: string, key: string) => (field === '' ? key : /^[A-Za-z_$][\w$]*$/.test(key) ? `${field}.${key}` : `${field}[${JSON.stringify(key)}]`);

/**
 * The first string (or object key) in `value` that is not storable text, depth first, or
 * undefined when every string is. Plain objects and arrays are walked without recursion (a
 * JSON body may nest thousands of levels deep); other values are skipped.
 */
export function findIllFormedText(value: unknown, field = ''): IllFormedText | undefined {
  const pending: [unknown, string][] = [[value, field]];
  while (pending.length > 0) {
    const [item, where] = pending.pop()!;
    if (typeof item === 'string') {
      const found = problemIn(item);
      if (found) return { field: where || '(value)', ...found };
    } else if (Array.isArray(item)) {
      for (let index = item.length - 1; index >= 0; index--) pending.push([item[index], `${where}[${index}]`]);
    } else if (item !== null && typeof item === 'object' && !(item instanceof Date)) {
      const entries = Object.entries(item);
      for (const [key] of entries) {
        const inKey = problemIn(key);
        if (inKey) return { field: `${where || '(value)'}.(key)`, ...inKey };
      }
      for (let index = entries.length - 1; index >= 0; index--) pending.push([entries[index]![1], join(where, entries[index]![0])]);
    }
  }
  return undefined;
}

const UNPAIRED = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * The text made storable: NUL removed, unpaired surrogates as U+FFFD. Applied to what a model
 * returns as it arrives (providers/chat.ts), so what is shown, kept and persisted is the
 * same text on both drivers; and by the drivers to server-produced text as a last guard.
 */
export function toWellFormedText(text: string): string {
  return text.replaceAll('\u0000', '').replace(UNPAIRED, '\ufffd');
}
