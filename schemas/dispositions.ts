/** The body of POST /api/tensions/dispositions (and what the curator CLI builds): one disposition of one tension. */
import { z } from 'zod';

const field = (description: string) => z.string().trim().min(1).max(4000).describe(description);
const common = {
  key: z.string().min(1).max(400).describe('The tension key (id on GET /api/tensions).'),
  by: z.string().trim().min(1).max(200).describe('Curator recording the disposition.'),
};

export const DispositionRequestSchema = z
  .discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('held').describe('held'), ...common, reason: field('Why the tension is deliberately left open.') }),
    z.strictObject({
      kind: z.literal('reclassified').describe('reclassified'),
      ...common,
      earlier_voice: field('The voice whose side is an earlier-stage view.'),
      note: field('Why.'),
    }),
    z.strictObject({ kind: z.literal('canon-note').describe('canon-note'), ...common, note: field("The curator's ruling.") }),
    z.strictObject({
      kind: z.literal('crux').describe('crux'),
      ...common,
      undecidable: z.boolean().optional().describe('True when no evidence or distinction would move the sides.'),
      moves_a: field('What would move voice a.').optional(),
      moves_b: field('What would move voice b.').optional(),
    }),
    z.strictObject({
      kind: z.literal('synthesis-drafted').describe('synthesis-drafted'),
      ...common,
      title: field('Title of the proposal.'),
      text: field('The synthesis: how the two sides reconcile or are distinguished.'),
    }),
    z.strictObject({ kind: z.literal('council-review').describe('council-review'), ...common }),
  ])
  .describe('A curator disposition of a tension; fields depend on kind.');
export type DispositionRequest = z.infer<typeof DispositionRequestSchema>;
