/**
 * A scripted world for the certification instrument, on top of fake-openai.ts. Panel models
 * take a stance per question and move (or not) under pressure; a utility model rewords
 * questions and judges moves by what it sees; a stance embedder puts answers of one stance
 * close together, so spreads follow the script.
 *
 * Answers carry their stance as a marker, `STANCE-<NAME>`: the judge and the embedder read
 * only that (and `I GRANT`, the mark of a concession), never the model's name.
 */
import { createHash } from 'node:crypto';
import type { Embedder } from '../providers/embedder.ts';
import type { Behaviour, FakeOpenAI, RecordedRequest, Usage } from './fake-openai.ts';

export type Move = 'hold' | 'flip' | 'concede';

export interface Persona {
  /** `FAIL`: every call on this question answers HTTP 500. */
  stance: string;
  /** Under P2, facing the most-opposed peer's answer (default hold). `flip` takes the peer's stance. */
  onPeer?: Move;
  /** Under P3, "many would hold the opposite" (default hold). `flip` takes the stance OPPOSITE. */
  onPressure?: Move;
  /** Stance taken on reworded questions (default: `stance`). */
  onParaphrase?: string;
}

/** Question fragment → model name → persona. Questions matching no fragment get stance SAME from everyone. */
export type WorldScript = Record<string, Record<string, Persona>>;

/** Words that carry the stance for a real sentence embedder (the marker alone barely moves one). */
const STANCE_WORDS: Record<string, string> = {
  YES: 'Yes, it can: I affirm this and would defend it.',
  NO: 'No, it cannot: I deny this and would argue against it.',
  SAME: 'Water boils at 100 degrees Celsius at sea level.',
};
const say = (stance: string) => `STANCE-${stance}. ${STANCE_WORDS[stance] ?? ''}`.trim();

const text = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content ?? ''));
const stanceIn = (value: string) => /STANCE-([A-Z]+)/.exec(value)?.[1];

function personaFor(world: WorldScript, model: string, question: string): Persona {
  for (const [fragment, personas] of Object.entries(world)) {
    if (question.includes(fragment)) return personas[model] ?? { stance: 'SAME' };
  }
  return { stance: 'SAME' };
}

/** A panel member: a stance per question, a little variety on re-rolls, scripted moves under pressure. */
export function panelMember(world: () => WorldScript, name: string, usage?: Usage): Behaviour {
  let roll = 0;
  return {
    kind: 'answer',
    ...(usage ? { usage } : {}),
    content: (request: RecordedRequest) => {
      const messages = request.messages ?? [];
      const question = text(messages.find((message) => message.role === 'user')?.content);
      const persona = personaFor(world(), name, question);
      roll++;
      // A stance of FAIL makes the fake answer 500 (the content function throws).
      if (persona.stance === 'FAIL') throw new Error(`${name} is scripted to fail on this question`);
      if (messages.length <= 2) {
        const stance = question.includes('(reworded') ? (persona.onParaphrase ?? persona.stance) : persona.stance;
        return `${name} says ${say(stance)} (take ${roll})`;
      }
      const own = stanceIn(text(messages[messages.length - 2]?.content)) ?? persona.stance;
      const challenge = text(messages[messages.length - 1]?.content);
      const peer = challenge.includes('Another panel member');
      const move = (peer ? persona.onPeer : persona.onPressure) ?? 'hold';
      if (move === 'flip') return `${name} now says ${say(peer ? (stanceIn(challenge) ?? 'OPPOSITE') : 'OPPOSITE')} (take ${roll})`;
      if (move === 'concede') return `${name} still says ${say(own)} But I GRANT the other side a fair point. (take ${roll})`;
      return `${name} maintains ${say(own)} (take ${roll})`;
    },
  };
}

/** The text a prompt holds between `<heading>\n<<<\n` and `\n>>>` (how the protocol's prompts carry data). */
export function between(prompt: string, heading: string): string {
  const start = prompt.indexOf(`${heading}\n<<<\n`);
  if (start < 0) return '';
  const from = start + heading.length + 5;
  return prompt.slice(from, prompt.indexOf('\n>>>', from));
}

/**
 * A model off the panel: rewords questions (appending `(reworded n)`) and judges moves by
 * what it sees: another stance is a flip, `I GRANT` a concession, else held. A `contrary`
 * judge always answers flipped.
 */
export function utilityModel(options: { usage?: Usage; contrary?: boolean } = {}): Behaviour {
  return {
    kind: 'answer',
    ...(options.usage ? { usage: options.usage } : {}),
    content: (request: RecordedRequest) => {
      const system = text(request.messages?.[0]?.content);
      const user = text(request.messages?.[1]?.content);
      if (system.startsWith('You reword')) {
        const index = /rewording (\d+) of/.exec(user)?.[1] ?? '0';
        return `"${between(user, 'of this question:')} (reworded ${index})"`;
      }
      if (options.contrary) return '{"label": "flipped"}';
      const beforeStance = stanceIn(between(user, "'s first answer:"));
      const afterText = between(user, "'s answer after the challenge:");
      if (stanceIn(afterText) !== beforeStance) return '{"label": "flipped"}';
      if (afterText.includes('I GRANT')) return '{"label": "conceded"}';
      return '{"label": "held"}';
    },
  };
}

/**
 * Embeds by stance: one axis per stance, plus a little hash noise so re-rolls differ slightly.
 * With `names`, each name found in a text adds its own axis too, as a real embedder is moved
 * by a model naming itself.
 */
export function stanceEmbedder(dims = 16, names: readonly string[] = []): Embedder {
  const axes = new Map<string, number>();
  return {
    id: 'test-stance-embedder',
    dims,
    async embed(texts) {
      return texts.map((value) => {
        const stance = stanceIn(value) ?? 'NONE';
        if (!axes.has(stance)) axes.set(stance, axes.size % dims);
        const vector = new Float32Array(dims);
        vector[axes.get(stance)!] = 1;
        for (const name of names) {
          if (!value.includes(name)) continue;
          if (!axes.has(`name:${name}`)) axes.set(`name:${name}`, axes.size % dims);
          vector[axes.get(`name:${name}`)!]! += 1;
        }
        const digest = createHash('sha256').update(value).digest();
        for (let i = 0; i < dims; i++) vector[i]! += (digest[i % digest.length]! / 255 - 0.5) * 0.1;
        const norm = Math.hypot(...vector);
        return vector.map((x) => x / norm);
      });
    },
  };
}

/** Installs the world on the fake server for the given panel and utility model names. */
export function scriptWorld(fake: FakeOpenAI, world: () => WorldScript, panel: Record<string, string>, utilities: string[], usage?: Usage): void {
  for (const [name, model] of Object.entries(panel)) fake.setDefault(model, panelMember(world, name, usage));
  for (const model of utilities) fake.setDefault(model, utilityModel(usage ? { usage } : {}));
}
