import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createPanel } from '../providers/chat.ts';
import { parsePanelConfig } from '../providers/panel-config.ts';
import { REPO_ROOT } from '../core/paths.ts';

describe('panel configuration', () => {
  it('the shipped examples parse', () => {
    for (const name of ['panel.openrouter.example.yaml', 'panel.ollama.example.yaml']) {
      const file = path.join(REPO_ROOT, 'config', name);
      const config = parsePanelConfig(readFileSync(file, 'utf8'), file);
      expect(config.panel.length).toBeGreaterThanOrEqual(3);
    }
  });

  it('leaves out members whose key is missing and names the variable', () => {
    const file = path.join(REPO_ROOT, 'config', 'panel.openrouter.example.yaml');
    const config = parsePanelConfig(readFileSync(file, 'utf8'), file);
    const { panel, missing } = createPanel(config, {});
    expect(panel).toBeUndefined();
    expect(missing[0]).toContain('OPENROUTER_API_KEY');
    expect(createPanel(config, { OPENROUTER_API_KEY: 'k' }).panel?.members).toHaveLength(5);
  });

  it('rejects a chair that is not configured and bad fields, naming them', () => {
    expect(() => parsePanelConfig('panel: [{name: A, family: A, lab: L, model: m, base_url: "http://x"}]\nchair: {use: B}', 'p.yaml')).toThrow(/chair "B"/);
    expect(() => parsePanelConfig('panel: [{name: A, family: A, lab: L, model: m, base_url: "not a url"}]\nchair: {use: A}', 'p.yaml')).toThrow(
      /panel\.0\.base_url/,
    );
  });
});
