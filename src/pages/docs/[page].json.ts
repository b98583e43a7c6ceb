/** /docs/<name>.json: the JSON twin of a static document page (the Markdown twin is the agents' file). */
import { DOCS, jsonResponse, pages, publicText } from '../../lib/artifacts.ts';

export function getStaticPaths() {
  const all = pages();
  return Object.keys(DOCS).filter((name) => all[name]).map((name) => ({ params: { page: name } }));
}

export function GET({ params }: { params: { page: string } }): Response {
  const doc = pages()[params.page]!;
  return jsonResponse({
    name: params.page,
    title: doc.title?.trim() || DOCS[params.page],
    description: doc.description,
    markdown_url: doc.path,
    page_url: `/docs/${params.page}/`,
    markdown: publicText(doc.path) ?? null,
  });
}
