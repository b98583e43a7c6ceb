/**
 * The append-only evidence log beside a record. Each line is flushed to disk before the
 * runner counts the call as done, so a crash or Ctrl-C loses at most the calls in flight.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { EVIDENCE_FILE_SUFFIX, EvidenceLineSchema, type EvidenceCall, type EvidenceLine } from '../schemas/certification.ts';

/** Name of the one evidence file the negative controls share. */
export const NEGATIVE_CONTROLS = 'negative-controls';

/** Where a subject's evidence lives: beside the record, or in one file for the negative controls. */
export function evidenceFile(contentDir: string, subject: string): string {
  return path.join(contentDir, 'divergences', `${subject.startsWith('control-') ? NEGATIVE_CONTROLS : subject}${EVIDENCE_FILE_SUFFIX}`);
}

export class EvidenceLogError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly detail: string,
  ) {
    super(`${file}:${line}: ${detail}`);
  }
}

/**
 * Every line of a log. A last line without its newline is a write torn by a crash: it is
 * skipped (its call will be made again). Any other bad line is an error naming the line.
 */
export function readEvidence(file: string): EvidenceLine[] {
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  // After the last newline: '' when the file is whole, a torn line after a crash.
  const complete = lines.slice(0, -1);
  const out: EvidenceLine[] = [];
  complete.forEach((line, index) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new EvidenceLogError(file, index + 1, 'is not JSON');
    }
    const parsed = EvidenceLineSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new EvidenceLogError(file, index + 1, `${issue?.path.join('.') || '(line)'}: ${issue?.message ?? 'is invalid'}`);
    }
    out.push(parsed.data);
  });
  return out;
}

/**
 * Problems of an evidence file found beside the records (for content validation): every line
 * must parse; a torn last line means a run was interrupted and must be resumed before review.
 */
export function checkEvidenceFile(file: string): { field: string; message: string }[] {
  try {
    readEvidence(file);
  } catch (error) {
    if (error instanceof EvidenceLogError) return [{ field: `line ${error.line}`, message: error.detail }];
    throw error;
  }
  const text = readFileSync(file, 'utf8');
  return text === '' || text.endsWith('\n')
    ? []
    : [{ field: '(end)', message: 'ends in a torn line (an interrupted certification): run npm run certify again to complete it' }];
}

export function appendEvidence(file: string, line: EvidenceLine): void {
  const parsed = EvidenceLineSchema.parse(line);
  mkdirSync(path.dirname(file), { recursive: true });
  const fd = openSync(file, 'a');
  try {
    writeSync(fd, `${JSON.stringify(parsed)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * The logged calls of a set of files made under `methodVersion`, by step key, in log order.
 * Calls of another method version had other prompts and are never reused.
 */
export function loggedCalls(files: Iterable<string>, methodVersion: string): Map<string, EvidenceCall[]> {
  const calls = new Map<string, EvidenceCall[]>();
  for (const file of new Set(files)) {
    for (const line of readEvidence(file)) {
      if (line.kind !== 'call' || line.method_version !== methodVersion) continue;
      const lines = calls.get(line.key) ?? [];
      lines.push(line);
      calls.set(line.key, lines);
    }
  }
  return calls;
}

/**
 * The logged answer a step may reuse: same key, same model version, same prompt to the byte.
 * A new model version behind the same name, or a changed prompt (another seed's blinding,
 * another paraphrase), is asked again.
 */
export function reusableCall(
  lines: readonly EvidenceCall[] | undefined,
  modelId: string,
  messages: readonly { role: string; content: string }[],
): EvidenceCall | undefined {
  return lines?.find(
    (line) =>
      line.model_id === modelId &&
      line.messages.length === messages.length &&
      line.messages.every((message, i) => message.role === messages[i]!.role && message.content === messages[i]!.content),
  );
}
