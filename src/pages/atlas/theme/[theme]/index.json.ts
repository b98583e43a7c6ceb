/** JSON twin of /atlas/theme/<theme>/. */
import { jsonResponse } from '../../../../lib/artifacts.ts';
import { atlasThemes, filterTwin } from '../../../../lib/atlas-groups.ts';

export function getStaticPaths() {
  return atlasThemes().map((theme) => ({ params: { theme } }));
}

export function GET({ params }: { params: { theme: string } }): Response {
  return jsonResponse(filterTwin({ theme: params.theme }));
}
