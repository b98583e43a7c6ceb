/**
 * One colour per voice, the same on every page: the Atlas's voices sorted by name, each given the
 * next slot of a fixed palette (`.voice-0` … `.voice-7` in global.css, each with a light and a dark
 * colour that keep AA contrast on cards). The map depends only on the set of voices in the build,
 * so a voice keeps its colour across records, the Atlas list, the tension map and the answers.
 * Colour is never the only cue: every coloured mark sits beside the voice's written name.
 */
import { divergences } from './artifacts.ts';

export const VOICE_PALETTE_SIZE = 8;

let slots: Map<string, number> | undefined;

/** Every voice named in the Atlas (answer authors and tension sides), sorted by name. */
export function atlasVoices(): string[] {
  const names = new Set<string>();
  for (const record of divergences()) {
    for (const answer of record.answers) names.add(answer.model);
    for (const tension of record.tensions) names.add(tension.voice_a).add(tension.voice_b);
  }
  return [...names].sort((a, b) => a.localeCompare(b, 'en'));
}

/** The palette slot of a voice; a voice the Atlas does not know gets one from its name. */
export function voiceSlot(name: string): number {
  slots ??= new Map(atlasVoices().map((voice, index) => [voice, index % VOICE_PALETTE_SIZE]));
  const known = slots.get(name);
  if (known !== undefined) return known;
  let hash = 0;
  for (const char of name) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return hash % VOICE_PALETTE_SIZE;
}

/** The class that sets `--voice` for an element about this voice. */
export function voiceClass(name: string): string {
  return `voice-${voiceSlot(name)}`;
}

/** A voice name as a URL segment: /atlas/voice/<slug>/. */
export function voiceSlug(name: string): string {
  return (
    name
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'voice'
  );
}
