/** JSON twin of /atlas/stale/. */
import { jsonResponse } from '../../../lib/artifacts.ts';
import { filterTwin } from '../../../lib/atlas-groups.ts';

export function GET(): Response {
  return jsonResponse(filterTwin({ freshness: 'stale' }));
}
