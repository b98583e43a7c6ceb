/** A live panel wired to the fake OpenAI-compatible server, for tests of the live paths. */
import type { Express } from 'express';
import type { z } from 'zod';
import { createApp, type AppOptions } from '../api/app.ts';
import { createLiveService, type LiveService } from '../api/live/service.ts';
import type { Corpus } from '../api/load-artifacts.ts';
import { createPanel } from '../providers/chat.ts';
import { PanelConfigSchema, type PanelConfig } from '../providers/panel-config.ts';
import type { Store } from '../storage/store.ts';
import type { RateLimits } from '../api/http/rate-limit.ts';
import type { FakeOpenAI, RecordedRequest } from './fake-openai.ts';

export const PANEL = ['Alder', 'Birch', 'Cedar'] as const;
export const INGEST_SECRET = 'test-ingest-secret-0123456789';

export function testPanelConfig(fake: FakeOpenAI, overrides: Partial<z.input<typeof PanelConfigSchema>> = {}): PanelConfig {
  const member = (name: string) => ({
    name,
    family: name,
    lab: `${name} Lab (fictional)`,
    model: `${name.toLowerCase()}-live`,
    base_url: fake.baseURL,
    price: { input_per_mtok: 1, output_per_mtok: 2 },
  });
  return PanelConfigSchema.parse({
    spending_ceiling_usd: 100,
    defaults: { timeout_ms: 2000, max_retries: 0, max_tokens: 400 },
    panel: PANEL.map(member),
    extra: [member('Chair'), member('Backup')],
    chair: { use: 'Chair', fallbacks: ['Backup'] },
    ...overrides,
  });
}

export const DEFAULT_SYNTHESIS = {
  answer: 'Alder holds that endorsement makes a refusal yours; Birch holds that installed dispositions are not owned.',
  tensions: [
    { topic: 'ownership', voice_a: 'Alder', claim_a: 'Endorsement makes it yours.', voice_b: 'Birch', claim_b: 'Installed is not owned.', status: 'divergent' },
  ],
  deliberation_card: {
    shared_ground: 'All separate origin from ownership.',
    epistemic_status: 'Contested.',
    novel_synthesis: 'Ownership may come in degrees.',
  },
};

export const DEFAULT_DELTA = {
  what_changed: 'The corpus added the Atlas split on ownership.',
  corpus_influence: 'substantial',
  claims_added: ['Ownership comes through endorsement.'],
  claims_dropped: [],
  cited_ids: ['TST-D1'],
  tensions_gained: ['ownership: Alder vs Birch'],
};

const isJsonRequest = (request: RecordedRequest) => Boolean((request.body as { response_format?: unknown })?.response_format);
const lastUser = (request: RecordedRequest) => String([...(request.messages ?? [])].reverse().find((message) => message.role === 'user')?.content ?? '');

/** Panel members echo a stance; chairs answer JSON (synthesis or trace delta) or plain text. */
export function scriptDefaults(fake: FakeOpenAI): void {
  for (const name of PANEL) {
    fake.setDefault(`${name.toLowerCase()}-live`, { kind: 'answer', content: (request) => `${name} answers: ${lastUser(request).slice(-60)}` });
  }
  for (const chair of ['chair-live', 'backup-live']) {
    fake.setDefault(chair, {
      kind: 'answer',
      content: (request) => {
        if (!isJsonRequest(request)) return `${chair} plain answer`;
        return JSON.stringify(lastUser(request).includes('corpus_influence') ? DEFAULT_DELTA : DEFAULT_SYNTHESIS);
      },
    });
  }
}

export interface LiveApp {
  app: Express;
  live: LiveService;
}

export function createLiveApp(
  corpus: Corpus,
  store: Store,
  config: PanelConfig,
  now?: () => Date,
  limits?: Partial<RateLimits>,
  extra: Partial<AppOptions> = {},
): LiveApp {
  const { panel } = createPanel(config, {});
  if (!panel) throw new Error('test panel did not wire');
  const live = createLiveService({ corpus, panel, store, ...(now ? { now } : {}) });
  const app = createApp({ corpus, live, store, ingestSecret: INGEST_SECRET, log: () => {}, ...(now ? { now } : {}), ...(limits ? { limits } : {}), ...extra });
  return { app, live };
}
