/** JSON twin of /tensions/voice/<voice>/: the tensions that voice is a side of. */
import { jsonResponse } from '../../../../lib/artifacts.ts';
import { tensionFilterTwin, tensionVoices } from '../../../../lib/tensions.ts';
import { voiceSlug } from '../../../../lib/voices.ts';

export function getStaticPaths() {
  return tensionVoices().map((name) => ({ params: { voice: voiceSlug(name) }, props: { name } }));
}

export function GET({ props }: { props: { name: string } }): Response {
  return jsonResponse(tensionFilterTwin({ voice: props.name }));
}
