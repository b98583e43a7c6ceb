/** JSON twin of /atlas/tier/<tier>/<freshness>/. */
import { FRESHNESS, jsonResponse, TIERS, type Freshness } from '../../../../../lib/artifacts.ts';
import { filterTwin } from '../../../../../lib/atlas-groups.ts';

export function getStaticPaths() {
  return TIERS.flatMap((tier) => FRESHNESS.map((freshness) => ({ params: { tier, freshness } })));
}

export function GET({ params }: { params: { tier: string; freshness: string } }): Response {
  return jsonResponse(filterTwin({ tier: params.tier, freshness: params.freshness as Freshness }));
}
