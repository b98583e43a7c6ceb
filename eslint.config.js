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
  {
    // Issue 27: a route declares its query parameters and the route table parses them before the
    // handler (api/routes/input.ts). A handler reads the parsed input; it neither reads the raw
    // query nor runs a parameter parser of its own, so the document and the code cannot part.
    files: ['api/routes/**/*.ts'],
    ignores: ['api/routes/input.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: 'core/declared-query\\.ts$',
              message: 'Declare the parameter in the operation (query: [...]); the route table parses it (api/routes/input.ts).',
            },
            {
              regex: 'core/next-call\\.ts$',
              importNames: ['parseOrSuggest', 'without', 'withValue', 'firstOf'],
              message: 'Query mends come from the declarations (core/declared-query.ts); a handler refusing a domain value names its suggested_next_call.',
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='request'][property.name='query']",
          message: 'Read input.query (parsed from the declaration) or input.raw (as received), not request.query.',
        },
        {
          selector: "CallExpression[callee.property.name=/^(safeParse|parse)$/] MemberExpression[object.name='request'][property.name='body']",
          message: 'Declare the body (body: {schema}) and read input.body: the route table parses it (api/routes/input.ts).',
        },
      ],
    },
  },
);
