/**
 * Writes a curator's disposition into content/tensions/<key>.yaml: appended to the history in
 * place (never rewritten: no other line of the file changes), then the whole content folder is
 * validated; a write that would break the build is rolled back. Used by the curator CLI and,
 * through the server's wiring, the API.
 */
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TENSION_KEY_PATTERN, type TensionDisposition, type TensionFile } from '../schemas/content.ts';
import { stringifyYaml } from './frontmatter.ts';
import { ContentError } from './issues.ts';
import { loadContent } from './load-content.ts';
import { writeFile } from './write.ts';
import { appendToSequence } from './yaml-edit.ts';

export interface AppendedDisposition {
  /** Path relative to the content folder. */
  file: string;
  dispositions: TensionDisposition[];
}

/**
 * The content folder would not validate with the disposition: typically its tension is sighted
 * only in records the server keeps in its store (persisted councils), which the content folder
 * does not hold until they are exported. Nothing was written.
 */
export class DispositionNotWritableError extends Error {}

export function appendDisposition(contentDir: string, key: string, disposition: TensionDisposition): AppendedDisposition {
  // The key becomes a file name: only the key alphabet may reach the disk.
  if (!TENSION_KEY_PATTERN.test(key)) throw new Error(`"${key}" is not a tension key`);
  const relative = `tensions/${key}.yaml`;
  const file = path.join(contentDir, relative);
  const previous = existsSync(file) ? readFileSync(file, 'utf8') : null;
  // An existing history grows by the new entry's lines only; its other lines keep their bytes.
  writeFile(
    file,
    previous === null ? stringifyYaml({ key, dispositions: [disposition] } satisfies TensionFile) : appendToSequence(previous, ['dispositions'], disposition),
  );
  try {
    const content = loadContent(contentDir);
    const written = content.tensions.find((entry) => entry.file === relative)!;
    return { file: relative, dispositions: written.data.dispositions };
  } catch (error) {
    if (previous === null) unlinkSync(file);
    else writeFileSync(file, previous);
    if (error instanceof ContentError)
      throw new DispositionNotWritableError(`the disposition would make the content invalid, nothing was written:\n${error.message}`, { cause: error });
    throw error;
  }
}
