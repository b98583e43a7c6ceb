// @ts-check
/**
 * The people's site: static HTML built from the JSON artifacts (scripts/build.ts) into dist/,
 * served by Express at /. The API (/api/*) and the agent files (/records/, /concepts/,
 * /audio/, /limitations.md, /llms.txt ...) are served from artifacts/public, so no page is
 * generated at those paths. No integrations, no client framework, no network at build time.
 */
import { defineConfig } from 'astro/config';

export default defineConfig({
  output: 'static',
  outDir: process.env.SITE_OUT_DIR ?? './dist',
  srcDir: './src',
  // Nothing is copied verbatim into dist/ except what src/ produces.
  publicDir: './src/public',
  trailingSlash: 'always',
  build: {
    format: 'directory',
    // The one stylesheet is small: inline it, so a page is a single request.
    inlineStylesheets: 'always',
  },
  // Keep verbatim whitespace untouched; compression only touches the static template.
  compressHTML: true,
  devToolbar: { enabled: false },
  prefetch: false,
  vite: {
    logLevel: 'warn',
  },
});
