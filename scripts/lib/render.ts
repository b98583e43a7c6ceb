import { remark } from 'remark';
import remarkHtml from 'remark-html';

const processor = remark().use(remarkHtml, { sanitize: true });

/** Markdown to sanitised HTML: contributed text never becomes live markup. */
export async function renderMarkdown(markdown: string): Promise<string> {
  return String(await processor.process(markdown));
}
