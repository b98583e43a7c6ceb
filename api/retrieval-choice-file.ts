/** data/search/retrieval.json: the build's choice of how much this corpus's search trusts the vectors and the feedback. */
import { existsSync, readFileSync } from 'node:fs';
import { RetrievalChoiceSchema, type RetrievalChoice } from '../core/search/retrieval-choice.ts';

/** The choice a build wrote, or undefined when there is none (built before choices existed) or it cannot be read. */
export function readRetrievalChoice(file: string): RetrievalChoice | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const parsed = RetrievalChoiceSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
