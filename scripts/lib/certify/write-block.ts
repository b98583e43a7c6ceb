/**
 * Writes a certification block into a record's frontmatter by editing only that block's
 * lines: every other byte of the file (verbatim answers above all) stays as it was.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import YAML from 'yaml';
import { createDivergenceSchema, type Certification } from '../../../schemas/content.ts';
import { parseMarkdown } from '../../../content-files/frontmatter.ts';

export class BlockWriteError extends Error {}

interface Span {
  start: number;
  end: number;
}

/** Byte span of the frontmatter's top-level `certification:` entry, or where to insert one. */
function findBlock(raw: string): { span: Span; insert: boolean } {
  if (!raw.startsWith('---\n')) throw new BlockWriteError('the file does not start with a frontmatter fence');
  const close = raw.indexOf('\n---\n', 3);
  const closeAtEnd = raw.endsWith('\n---') ? raw.length - 3 : -1;
  const frontEnd = close >= 0 ? close + 1 : closeAtEnd;
  if (frontEnd < 0) throw new BlockWriteError('the frontmatter has no closing fence');
  const lines: Span[] = [];
  for (let start = 4; start < frontEnd;) {
    const newline = raw.indexOf('\n', start);
    const end = newline < 0 || newline >= frontEnd ? frontEnd : newline + 1;
    lines.push({ start, end });
    start = end;
  }
  const text = (line: Span) => raw.slice(line.start, line.end);
  const topLevel = (line: Span) => /^[^\s#]/.test(text(line));
  const at = lines.findIndex((line) => /^certification\s*:/.test(text(line)));
  if (at < 0) {
    const answers = lines.find((line) => /^answers\s*:/.test(text(line)));
    const position = answers ? answers.start : frontEnd;
    return { span: { start: position, end: position }, insert: true };
  }
  let last = at;
  for (let i = at + 1; i < lines.length && !topLevel(lines[i]!); i++) {
    if (text(lines[i]!).trim() !== '') last = i;
  }
  return { span: { start: lines[at]!.start, end: lines[last]!.end }, insert: false };
}

/**
 * The file with `certification` replaced (or inserted before `answers:`). Throws when the
 * result would not validate, or would change any other field.
 */
export function replaceCertificationBlock(raw: string, block: Certification, idPrefix: string): string {
  const certification = JSON.parse(JSON.stringify(block)) as Certification; // no undefined fields
  const { span } = findBlock(raw);
  const text = YAML.stringify({ certification }, { lineWidth: 0 });
  const next = raw.slice(0, span.start) + text + raw.slice(span.end);
  const schema = createDivergenceSchema(idPrefix);
  const before = schema.safeParse(parseMarkdown(raw).data);
  let parsedNext;
  try {
    parsedNext = parseMarkdown(next);
  } catch (error) {
    throw new BlockWriteError(`the written record would not parse: ${(error as Error).message.split('\n')[0]}`);
  }
  const after = schema.safeParse(parsedNext.data);
  if (!after.success) {
    const issue = after.error.issues[0];
    throw new BlockWriteError(`the written record would not validate: ${issue?.path.join('.')} ${issue?.message}`);
  }
  if (!isDeepStrictEqual(after.data.certification, certification)) throw new BlockWriteError('the written block does not read back as written');
  if (before.success) {
    const strip = ({ certification: _certification, ...rest }: typeof before.data) => rest;
    if (!isDeepStrictEqual(strip(before.data), strip(after.data))) throw new BlockWriteError('writing the block would change another field');
  }
  if (parsedNext.body !== parseMarkdown(raw).body) throw new BlockWriteError('writing the block would change the body');
  return next;
}

/**
 * Writes the block into the record file (whole-file replace through a rename, so a reader
 * never sees half a file). Returns why it was not written when the edit would not be safe.
 */
export function writeCertificationBlock(file: string, certification: Certification, idPrefix: string): string | undefined {
  let next: string;
  try {
    next = replaceCertificationBlock(readFileSync(file, 'utf8'), certification, idPrefix);
  } catch (error) {
    if (error instanceof BlockWriteError) return error.message;
    throw error;
  }
  writeFileSync(`${file}.tmp`, next);
  renameSync(`${file}.tmp`, file);
  return undefined;
}
