import type { z } from 'zod';

/** One problem in the content, named by file and field so a contributor can fix it. */
export interface ContentIssue {
  file: string;
  field: string;
  message: string;
}

export function issuesFromZod(file: string, error: z.ZodError): ContentIssue[] {
  return error.issues.map((issue) => ({
    file,
    field: issue.path.length > 0 ? issue.path.map(String).join('.') : '(file)',
    message: describeIssue(issue),
  }));
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_value' && 'values' in issue) {
    return `${issue.message}; allowed values: ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
  }
  if (issue.code === 'invalid_type' && issue.message.includes('received undefined')) {
    return `is required (${issue.expected})`;
  }
  return issue.message;
}

export function formatIssues(issues: readonly ContentIssue[]): string {
  return issues.map((issue) => `${issue.file}: ${issue.field}: ${issue.message}`).join('\n');
}

export class ContentError extends Error {
  constructor(readonly issues: readonly ContentIssue[]) {
    super(`content is invalid (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${formatIssues(issues)}`);
    this.name = 'ContentError';
  }
}
