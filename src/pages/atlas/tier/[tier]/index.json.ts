/** JSON twin of /atlas/tier/<tier>/. */
import { jsonResponse, TIERS } from '../../../../lib/artifacts.ts';
import { filterTwin } from '../../../../lib/atlas-groups.ts';

export function getStaticPaths() {
  return TIERS.map((tier) => ({ params: { tier } }));
}

export function GET({ params }: { params: { tier: string } }): Response {
  return jsonResponse(filterTwin({ tier: params.tier }));
}
