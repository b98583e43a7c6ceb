import matter from 'gray-matter';
import YAML from 'yaml';

/**
 * Frontmatter is read and written with the same YAML library, so a value written by an
 * importer (verbatim model answers) reads back byte for byte.
 */
const engines = {
  yaml: {
    parse: (source: string) => (YAML.parse(source) ?? {}) as object,
    stringify: (data: object) => YAML.stringify(data),
  },
};

export interface ParsedMarkdown {
  data: Record<string, unknown>;
  body: string;
}

export function parseMarkdown(source: string): ParsedMarkdown {
  // gray-matter caches by input string; pass an options object to keep results independent.
  const parsed = matter(source, { engines });
  return { data: parsed.data as Record<string, unknown>, body: parsed.content.replace(/^\n+/, '') };
}

export function stringifyMarkdown(data: Record<string, unknown>, body: string): string {
  const yaml = YAML.stringify(stripUndefined(data), { lineWidth: 0 });
  return `---\n${yaml}---\n${body.length > 0 ? `\n${body.replace(/\n*$/, '\n')}` : ''}`;
}

export function parseYaml(source: string): unknown {
  return YAML.parse(source);
}

export function stringifyYaml(data: unknown): string {
  return YAML.stringify(stripUndefined(data), { lineWidth: 0 });
}

function stripUndefined<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
