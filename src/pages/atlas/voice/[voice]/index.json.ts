/** JSON twin of /atlas/voice/<voice>/: the questions that voice answered. */
import { jsonResponse } from '../../../../lib/artifacts.ts';
import { filterTwin } from '../../../../lib/atlas-groups.ts';
import { atlasVoices, voiceSlug } from '../../../../lib/voices.ts';

export function getStaticPaths() {
  return atlasVoices().map((name) => ({ params: { voice: voiceSlug(name) }, props: { name } }));
}

export function GET({ props }: { props: { name: string } }): Response {
  return jsonResponse(filterTwin({ voice: props.name }));
}
