/**
 * In-place edits of YAML files and of markdown frontmatter, for the writes a curator triggers
 * (issue 17, item 6): the edit splices new text into the file and leaves every other byte as it
 * was — comments, key order, quoting, blank lines, block-scalar whitespace, the body of a
 * markdown file. Each edit re-reads its result and throws, writing nothing, unless the data is
 * exactly the old data with the one intended change.
 */
import { isDeepStrictEqual } from 'node:util';
import YAML, { isMap, isScalar, isSeq, type Node as YamlNode, type Scalar, type YAMLMap, type YAMLSeq } from 'yaml';

export class InPlaceEditError extends Error {}

/** A value as it will read back: no undefined members (they are never written). */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function parseDocument(source: string): YAML.Document.Parsed {
  const doc = YAML.parseDocument(source);
  if (doc.errors.length > 0) throw new InPlaceEditError(`the YAML does not parse: ${doc.errors[0]!.message}`);
  return doc;
}

/** Offset of the start of the line holding `offset`. */
function lineStart(source: string, offset: number): number {
  return source.lastIndexOf('\n', offset - 1) + 1;
}

/** Scalars of `node` take the style of the same key in `model` (the item written before it). */
function copyStyles(node: unknown, model: unknown): void {
  if (!isMap(node) || !isMap(model)) return;
  for (const pair of (node as YAMLMap).items) {
    const key = isScalar(pair.key) ? pair.key.value : pair.key;
    const theirs = (model as YAMLMap).get(key, true);
    if (isScalar(pair.value) && isScalar(theirs) && typeof pair.value.value === 'string' && typeof theirs.value === 'string' && theirs.type) {
      (pair.value as Scalar).type = theirs.type;
    } else {
      copyStyles(pair.value, theirs);
    }
  }
}

/** `value` as one block-sequence item ("- ...") indented by `indent`, styled after `model`. */
function renderItem(value: unknown, model: unknown, indent: number): string {
  const doc = new YAML.Document([value]);
  copyStyles((doc.contents as YAMLSeq).items[0], model);
  const pad = ' '.repeat(indent);
  return doc
    .toString({ lineWidth: 0 })
    .split('\n')
    .map((line) => (line === '' ? line : pad + line))
    .join('\n');
}

/** New lines take the file's line ending (CRLF when it has one). */
function withEol(source: string, text: string): string {
  return source.includes('\r\n') ? text.replace(/\n/g, '\r\n') : text;
}

function insertAt(source: string, at: number, text: string): string {
  const joint = at > 0 && source[at - 1] !== '\n' ? '\n' : '';
  return `${source.slice(0, at)}${withEol(source, `${joint}${text}`)}${source.slice(at)}`;
}

function splice(source: string, doc: YAML.Document.Parsed, path: readonly string[], value: unknown): string | undefined {
  const node = doc.getIn(path, true) as YamlNode | undefined;
  if (!isSeq(node) || !node.range) return undefined;
  const seq = node as YAMLSeq;
  if (!seq.flow && seq.items.length > 0) {
    // A block sequence: the new item goes right after the last one, at the same indent.
    const start = lineStart(source, seq.range![0]);
    const lead = source.slice(start, seq.range![0]);
    if (!/^ *$/.test(lead)) return undefined;
    return insertAt(source, seq.range![1], renderItem(value, seq.items[seq.items.length - 1], lead.length));
  }
  if (seq.flow && seq.items.length === 0 && path.length > 0) {
    // `key: []` becomes `key:` followed by the one item, indented under the key.
    const open = seq.range![0];
    let from = open;
    while (from > 0 && (source[from - 1] === ' ' || source[from - 1] === '\t')) from--;
    if (source[from - 1] !== ':') return undefined;
    const start = lineStart(source, from);
    const indent = /^ */.exec(source.slice(start))![0].length + 2;
    let close = source.indexOf(']', open) + 1;
    while (source[close] === ' ' || source[close] === '\t') close++;
    if (source[close] === '#') return undefined;
    return `${source.slice(0, from)}${withEol(source, `\n${renderItem(value, undefined, indent).replace(/\n$/, '')}`)}${source.slice(close)}`;
  }
  return undefined;
}

/**
 * Appends `value` to the sequence at `path`. A block sequence grows by the item's lines and
 * nothing else; an empty `[]` changes its key's line too; any other shape (a flow sequence with
 * items) is edited through the document model, which keeps comments and key order.
 */
export function appendToSequence(source: string, path: readonly string[], value: unknown): string {
  const item = plain(value);
  const doc = parseDocument(source);
  let next = splice(source, doc, path, item);
  if (next === undefined) {
    if (!isSeq(doc.getIn(path, true))) throw new InPlaceEditError(`${path.join('.')} is not a list`);
    doc.addIn(path, item);
    next = doc.toString({ lineWidth: 0 });
  }
  if (!isDeepStrictEqual(YAML.parse(next), withAppended(YAML.parse(source), path, item))) {
    throw new InPlaceEditError(`appending to ${path.join('.')} would change more than that list; nothing was written`);
  }
  return next;
}

function withAppended(data: unknown, path: readonly string[], item: unknown): unknown {
  let target = data as Record<string, unknown>;
  for (const key of path.slice(0, -1)) target = target[key] as Record<string, unknown>;
  (target[path[path.length - 1]!] as unknown[]).push(item);
  return data;
}

/**
 * Sets a top-level key of a block mapping: its entry's lines are replaced (or the entry added
 * at the end of the mapping); every other line stays as it was.
 */
export function setTopLevel(source: string, key: string, value: unknown): string {
  const entry = plain(value);
  const doc = parseDocument(source);
  const map = doc.contents;
  if (!isMap(map) || map.flow || !map.range) throw new InPlaceEditError('the document is not a block mapping');
  const text = withEol(source, YAML.stringify({ [key]: entry }, { lineWidth: 0 }));
  const pair = map.items.find((candidate) => (isScalar(candidate.key) ? candidate.key.value : candidate.key) === key);
  let next: string;
  if (pair && isScalar(pair.key) && pair.key.range && (pair.value as YamlNode | null)?.range) {
    const from = lineStart(source, pair.key.range[0]);
    const valueEnd = (pair.value as YamlNode).range![1];
    const newline = source.indexOf('\n', valueEnd - 1);
    const to = newline < 0 ? source.length : newline + 1;
    if (from !== pair.key.range[0]) throw new InPlaceEditError(`${key} is not at the start of its line`);
    next = `${source.slice(0, from)}${text}${source.slice(to)}`;
  } else if (!pair) {
    next = insertAt(source, map.range[1], text);
  } else {
    throw new InPlaceEditError(`${key} has no value to replace`);
  }
  const expected = { ...(YAML.parse(source) as Record<string, unknown>), [key]: entry };
  if (!isDeepStrictEqual(YAML.parse(next), expected)) throw new InPlaceEditError(`setting ${key} would change more than that entry; nothing was written`);
  return next;
}

/** A markdown file's frontmatter YAML and everything from its closing fence on, byte for byte. */
export function splitFrontmatter(source: string): { yaml: string; rest: string } {
  const open = /^---[ \t]*\r?\n/.exec(source);
  if (!open) throw new InPlaceEditError('the file does not start with a frontmatter fence');
  for (let start = open[0].length; start < source.length;) {
    const newline = source.indexOf('\n', start);
    const end = newline < 0 ? source.length : newline + 1;
    if (/^---[ \t]*\r?$/.test(source.slice(start, newline < 0 ? source.length : newline))) {
      return { yaml: source.slice(open[0].length, start), rest: source.slice(start) };
    }
    start = end;
  }
  throw new InPlaceEditError('the frontmatter has no closing fence');
}

/** Applies `edit` to a markdown file's frontmatter; the fences and the body keep their bytes. */
export function editFrontmatter(source: string, edit: (yaml: string) => string): string {
  const { yaml, rest } = splitFrontmatter(source);
  return `${source.slice(0, source.length - yaml.length - rest.length)}${edit(yaml)}${rest}`;
}
