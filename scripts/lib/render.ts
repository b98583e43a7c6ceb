import { remark } from 'remark';
import remarkHtml from 'remark-html';

const processor = remark().use(remarkHtml, { sanitize: true });

/**
 * Part of each record twin's key (twin-reuse.ts): a build links a previous build's twin only
 * when its key is unchanged, so change this whenever the HTML rendered from the same markdown
 * would change (a plugin, an option, a package's major version).
 */
export const RENDER_VERSION = 'remark 15 + remark-html 16, sanitize';

/** Markdown to sanitised HTML: contributed text never becomes live markup. */
export async function renderMarkdown(markdown: string): Promise<string> {
  return String(await processor.process(markdown));
}
