/** /works.md: the Markdown twin of the corpus list (/works/), grouped by ring like the page; its first page when the list has several. */
import { markdownResponse } from '../lib/artifacts.ts';
import { worksMarkdown } from '../lib/works-list.ts';

export function GET(): Response {
  return markdownResponse(worksMarkdown(1));
}
