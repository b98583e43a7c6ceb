import js from '@eslint/js';
import astro from 'eslint-plugin-astro';
import tseslint from 'typescript-eslint';
import layers from './eslint-rules/layers.js';
import requestPath from './eslint-rules/request-path.js';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'artifacts/', '.cache/', '.astro/', 'scratch/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // The site's .astro files: frontmatter and scripts parsed with TypeScript, Astro's recommended rules.
  ...astro.configs['flat/recommended'],
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        globalThis: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    plugins: { layers },
    rules: {
      'layers/one-way': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    // What runs on a request before its body is known to be at most 64 levels deep (issue 26).
    files: ['api/app.ts', 'api/http/**/*.ts', 'api/mcp/**/*.ts', 'core/well-formed-text.ts', 'storage/text-check.ts'],
    plugins: { 'request-path': requestPath },
    rules: { 'request-path/no-recursion': 'error' },
  },
);
