/** Types of eslint-rules/layers.js (plain JavaScript, because eslint.config.js loads it). */
import type { ESLint } from 'eslint';
export type Layer =
  'schemas' | 'core' | 'providers' | 'storage' | 'content-files' | 'api' | 'api-edge' | 'scripts' | 'src' | 'bin' | 'devkit' | 'bench' | 'test' | 'native';
export function layerOf(relativePath: string): Layer | undefined;
export const LAYERS: Record<Layer, Layer[]>;
declare const plugin: ESLint.Plugin;
export default plugin;
