/**
 * `npm run check-change -- --base <ref>`: the content at a base commit against the working
 * tree, classified for a curator (content-files/change/). Exit 0 when every change is allowed
 * (or the curator typed the override), 1 on a refusal or invalid content, 2 on a usage error.
 */
import { classifyChange } from '../../content-files/change/classify.ts';
import { CHANGE_RULES, formatReport, type ChangeReport } from '../../content-files/change/report.ts';
import { ContentError, formatIssues, type ContentIssue } from '../../content-files/issues.ts';
import { loadContent } from '../../content-files/load-content.ts';
import { commitSnapshot, GitSnapshotError, locateContent, resolveBase, workingSnapshot } from './git-snapshot.ts';

export interface ChangeCheckOptions {
  contentDir: string;
  base: string;
  /** The curator's override: the reason, in words, for accepting refused changes. */
  override?: string;
}

export interface ChangeCheckOutcome {
  code: 0 | 1 | 2;
  /** What the CLI prints (stdout on success, stderr otherwise). */
  text: string;
  report?: ChangeReport;
  invalid?: readonly ContentIssue[];
}

/** An override must say why in words, so that it reads as a decision in the log, not a flag. */
export const OVERRIDE_MIN_WORDS = 4;

const BANNER = '!'.repeat(72);

export function runChangeCheck(options: ChangeCheckOptions): ChangeCheckOutcome {
  const override = options.override?.trim();
  if (override !== undefined && override.split(/\s+/).length < OVERRIDE_MIN_WORDS) {
    return {
      code: 2,
      text: `--override needs the reason in words (at least ${OVERRIDE_MIN_WORDS}), e.g. --override "withdrawn at the contributor's request, issue 41"`,
    };
  }
  let report: ChangeReport;
  let heading: string;
  try {
    const location = locateContent(options.contentDir);
    const commit = resolveBase(location, options.base);
    report = classifyChange(commitSnapshot(location, commit), workingSnapshot(location));
    heading = `Content change: ${location.prefix || './'} at ${options.base} (${commit.slice(0, 12)}) → working tree`;
  } catch (error) {
    if (error instanceof GitSnapshotError) return { code: 2, text: `check-change: ${error.message}` };
    throw error;
  }
  // The validator's verdict first: an invalid result is never merged, override or not.
  let invalid: readonly ContentIssue[] = [];
  try {
    loadContent(options.contentDir);
  } catch (error) {
    if (!(error instanceof ContentError)) throw error;
    invalid = error.issues;
  }
  const lines = [formatReport(report, heading)];
  if (invalid.length > 0) lines.push('', `Invalid content (${invalid.length}; npm run validate, no override):`, formatIssues(invalid));
  if (report.refusals.length === 0) {
    lines.push('', invalid.length > 0 ? 'FAILED: the content does not validate.' : 'OK: every change is allowed.');
    return { code: invalid.length > 0 ? 1 : 0, text: lines.join('\n'), report, invalid };
  }
  const rules = [...new Set(report.refusals.map((refusal) => refusal.rule))];
  if (override !== undefined) {
    lines.push(
      '',
      BANNER,
      `!! OVERRIDE: ${report.refusals.length} refused change${report.refusals.length === 1 ? '' : 's'} accepted by the curator's typed override`,
      `!! Reason given: ${override}`,
      ...rules.map((rule) => `!! Rule set aside: ${rule}: ${CHANGE_RULES[rule]}`),
      BANNER,
    );
    return { code: invalid.length > 0 ? 1 : 0, text: lines.join('\n'), report, invalid };
  }
  lines.push(
    '',
    `REFUSED: ${report.refusals.length} change${report.refusals.length === 1 ? '' : 's'} break${report.refusals.length === 1 ? 's' : ''} the rules of published content:`,
    ...rules.map((rule) => `  ${rule}: ${CHANGE_RULES[rule]}`),
    'A curator who accepts them anyway runs: npm run check-change -- --base <ref> --override "<the reason, in words>" (docs/CONTRIBUTING.md).',
  );
  return { code: 1, text: lines.join('\n'), report, invalid };
}
