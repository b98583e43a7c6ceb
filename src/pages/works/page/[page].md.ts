/** /works/page/<n>.md: the Markdown twin of page n of the corpus list (src/lib/works-list.ts). */
import type { APIContext } from 'astro';
import { markdownResponse } from '../../../lib/artifacts.ts';
import { laterWorksPages, worksMarkdown } from '../../../lib/works-list.ts';

export function getStaticPaths() {
  return laterWorksPages();
}

export function GET({ props }: APIContext): Response {
  return markdownResponse(worksMarkdown((props as { page: number }).page));
}
