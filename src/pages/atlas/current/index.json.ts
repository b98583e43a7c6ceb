/** JSON twin of /atlas/current/. */
import { jsonResponse } from '../../../lib/artifacts.ts';
import { filterTwin } from '../../../lib/atlas-groups.ts';

export function GET(): Response {
  return jsonResponse(filterTwin({ freshness: 'current' }));
}
