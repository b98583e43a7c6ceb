/** JSON twin of /tensions/repaired/. */
import { jsonResponse } from '../../../lib/artifacts.ts';
import { tensionFilterTwin } from '../../../lib/tensions.ts';

export function GET(): Response {
  return jsonResponse(tensionFilterTwin({ lifecycle: 'repaired' }));
}
