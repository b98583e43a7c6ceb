/**
 * The live panel is configured, not hard-coded: a YAML (or JSON) file names each model
 * with its OpenAI-compatible base URL and the environment variable holding its key.
 * Keys never live in the file. See config/panel.*.example.yaml.
 */
import { existsSync, readFileSync } from 'node:fs';
import YAML from 'yaml';

export { DEFAULT_DELIBERATION_DEADLINE_MS, PanelModelSchema, PanelConfigSchema, type PanelModelConfig, type PanelConfig } from '../schemas/panel.ts';
import { PanelConfigSchema, type PanelConfig } from '../schemas/panel.ts';

export function parsePanelConfig(text: string, source: string): PanelConfig {
  let raw: unknown;
  try {
    raw = YAML.parse(text);
  } catch (error) {
    throw new Error(`${source}: not valid YAML/JSON: ${(error as Error).message}`, { cause: error });
  }
  const parsed = PanelConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(file)'}: ${issue.message}`).join('; ');
    throw new Error(`${source}: ${problems}`);
  }
  const names = new Set([...parsed.data.panel, ...parsed.data.extra].map((model) => model.name));
  for (const name of [parsed.data.chair.use, ...parsed.data.chair.fallbacks]) {
    if (!names.has(name)) throw new Error(`${source}: chair "${name}" is not a model in panel or extra`);
  }
  return parsed.data;
}

export function loadPanelConfig(file: string | undefined): PanelConfig | undefined {
  if (!file) return undefined;
  if (!existsSync(file)) throw new Error(`PANEL_CONFIG names ${file}, which does not exist`);
  return parsePanelConfig(readFileSync(file, 'utf8'), file);
}
