/** Types of eslint-rules/request-path.js (plain JavaScript, because eslint.config.js loads it). */
import type { ESLint } from 'eslint';
declare const plugin: ESLint.Plugin;
export default plugin;
