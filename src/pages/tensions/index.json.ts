/** JSON twin of /tensions/: every tracked tension, as GET /api/tensions lists them. */
import { jsonResponse } from '../../lib/artifacts.ts';
import { tensionFilterTwin } from '../../lib/tensions.ts';

export function GET(): Response {
  return jsonResponse(tensionFilterTwin({}));
}
