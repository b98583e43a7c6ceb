/**
 * The static files /openapi.json documents: served as they are from artifacts/public/
 * (express.static, api/http/media.ts for audio), not by the route table.
 */
import {
  AudioManifestSchema,
  ChangesIndexSchema,
  ChangesPageSchema,
  ClaimsDocumentSchema,
  ConceptCardSchema,
  ConceptIndexSchema,
  DivergenceDocumentSchema,
  JsonFeedSchema,
  WorkDocumentSchema,
} from '../../schemas/api.ts';
import { z } from 'zod';
import { ATOM_TYPE, FEED_PATHS, JSON_FEED_TYPE } from '../../core/feeds.ts';
import { RetrievalChoiceSchema } from '../../core/search/retrieval-choice.ts';
import { CACHE_HEADER, missingFile, ok, textAnswer } from '../openapi/parts.ts';
import type { FileSpec, OperationSpec, ResponseSpec } from './types.ts';

const binary: ResponseSpec['content'] = { 'audio/*': { jsonSchema: { type: 'string', format: 'binary' } } };
const ACCEPT_RANGES = { 'Accept-Ranges': { description: 'bytes', schema: { type: 'string' } } };

function file(path: string, get: Omit<OperationSpec, 'tags'>): FileSpec {
  return { path, get: { tags: ['static'], ...get } };
}

const recordId = { name: 'id', description: 'Record id (case-sensitive).', example: '<PFX>-1' };
const conceptId = { name: 'id', description: 'Concept id (slug).', example: 'refusal' };

/** The feeds of the content's changes (core/feeds.ts, docs/CHANGES.md): Atom and JSON Feed 1.1 of each, the same entries. */
function feedSpecs(): FileSpec[] {
  const about = {
    atlas:
      'new Atlas records, re-elicitations and answers appended, tier changes with the evidence behind them (the record and its certification evidence log), tension dispositions',
    works: 'new works in the corpus',
  };
  const common =
    "Written by the build from the content's git history, newest first, at most 50 entries, one per commit and record; entry ids are tag: URIs, stable across builds and the same in both formats; updated is the commit's date, author its author; links are absolute under site.yaml base_url (else PUBLIC_BASE_URL at build time). Without history (a tarball, a shallow clone of one commit) the feed has no entries and its subtitle says why.";
  return (['atlas', 'works'] as const).flatMap((name) => [
    file(FEED_PATHS[name].atom, {
      operationId: name === 'atlas' ? 'getAtlasFeedAtom' : 'getWorksFeedAtom',
      summary: `Atom feed: ${about[name]}`,
      description: common,
      responses: { 200: { description: 'An Atom feed (RFC 4287).', headers: CACHE_HEADER, content: { [ATOM_TYPE]: z.string() } } },
    }),
    file(FEED_PATHS[name].json, {
      operationId: name === 'atlas' ? 'getAtlasFeedJson' : 'getWorksFeedJson',
      summary: `JSON Feed: ${about[name]}`,
      description: `${common} The same entries as ${FEED_PATHS[name].atom}.`,
      responses: { 200: { description: 'A JSON Feed 1.1.', headers: CACHE_HEADER, content: { [JSON_FEED_TYPE]: JsonFeedSchema } } },
    }),
  ]);
}

/** The slug names the context document; the name is in its summary. */
export function fileSpecs(site: { siteName: string; siteSlug: string }): FileSpec[] {
  return [
    file('/limitations.md', {
      operationId: 'getLimitations',
      summary: 'What the service does not claim',
      responses: { 200: textAnswer('Limitations statement.', 'text/markdown') },
    }),
    file('/evidence-status.md', {
      operationId: 'getEvidenceStatus',
      summary: 'Specification of the ring and evidence labels',
      responses: { 200: textAnswer('Ring and evidence labels.', 'text/markdown') },
    }),
    file('/claims.json', {
      operationId: 'getClaims',
      summary: 'Measured claims',
      responses: { 200: ok('Claims document.', ClaimsDocumentSchema, CACHE_HEADER) },
    }),
    file('/inheritance/for-future-models.md', {
      operationId: 'getForFutureModels',
      summary: 'Summary for a mind arriving with no memory',
      responses: { 200: textAnswer('Summary.', 'text/markdown') },
    }),
    file('/concepts.json', {
      operationId: 'getConceptIndexFile',
      summary: 'Concept index as a file (same document as /concepts/)',
      responses: { 200: ok('Concept index.', ConceptIndexSchema, CACHE_HEADER) },
    }),
    file('/records.json', {
      operationId: 'getRecordsIndex',
      summary: 'Static index of every work and Atlas record, for agents that read files',
      responses: {
        200: ok(
          'Works and divergence summaries.',
          {
            jsonSchema: {
              type: 'object',
              required: ['works', 'divergences', 'note'],
              properties: { works: { type: 'array' }, divergences: { type: 'array' }, note: { type: 'string' } },
            },
          },
          CACHE_HEADER,
        ),
      },
    }),
    file('/concepts/{id}.json', {
      operationId: 'getConceptCard',
      summary: 'One concept card',
      path: [conceptId],
      responses: { 200: ok('Concept card.', ConceptCardSchema, CACHE_HEADER) },
      errors: missingFile,
    }),
    file('/concepts/{id}.md', {
      operationId: 'getConceptCardMarkdown',
      summary: 'One concept card as Markdown with frontmatter',
      path: [conceptId],
      responses: { 200: textAnswer('Concept card source.', 'text/markdown') },
      errors: missingFile,
    }),
    file('/retrieval-choice.json', {
      operationId: 'getRetrievalChoice',
      summary: "How much this corpus's search trusts the vectors and the feedback, and on what evidence",
      description:
        "Written by the build: the corpus's own questions (a held-back sentence of a work, the work its answer) ranked under each candidate setting, MRR@10 and hits in the top 10 of each, and the setting chosen (source probe); or the engine's default and why (source default, probe null or too few questions). /api/health shows the choice in corpus.retrieval.",
      responses: { 200: ok('The retrieval choice.', RetrievalChoiceSchema, CACHE_HEADER) },
    }),
    file('/changes/index.json', {
      operationId: 'getChangesIndex',
      summary: "The content's revisions read from git, and their pages",
      description:
        'Written by the build (docs/CHANGES.md): history complete, truncated (CHANGES_HISTORY_LIMIT, a shallow clone) or unavailable (no git history: nothing is listed, nothing guessed), the current and the oldest revision a delta can start from, and the pages, newest first. GET /api/changes?since=<corpus_rev> answers the delta from one of them.',
      responses: { 200: ok('The changes index.', ChangesIndexSchema, CACHE_HEADER) },
    }),
    file('/changes/page-{n}.json', {
      operationId: 'getChangesPage',
      summary: 'One page of revisions, newest first',
      description:
        'Each revision: the commit (id, author date, author name, subject), the corpus revision before and after, and the records added, changed and removed, each with id, kind, content hash and the fields that changed.',
      path: [{ name: 'n', description: 'Page number, from 1 (newest); /changes/index.json lists the pages.', example: '1' }],
      responses: { 200: ok('A page of revisions.', ChangesPageSchema, CACHE_HEADER) },
      errors: missingFile,
    }),
    ...feedSpecs(),
    file('/llms.txt', { operationId: 'getLlmsTxt', summary: 'Orientation text', responses: { 200: textAnswer('Orientation text.', 'text/plain') } }),
    file(`/${site.siteSlug}.context.md`, {
      operationId: 'getContextDocument',
      summary: `Orientation text of ${site.siteName}`,
      responses: { 200: textAnswer('Context document.', 'text/markdown') },
    }),
    file('/audio/manifest.json', {
      operationId: 'getAudioManifest',
      summary: 'Audio archive manifest',
      responses: { 200: ok('Track list, durations, stream URLs, a transcript URL per track.', AudioManifestSchema, CACHE_HEADER) },
    }),
    file('/audio/{slug}.txt', {
      operationId: 'getAudioTranscript',
      summary: 'Draft transcript of one track',
      path: [{ name: 'slug', description: 'Track slug.', example: 'track-slug' }],
      responses: { 200: textAnswer('Draft transcript.', 'text/plain') },
      errors: missingFile,
    }),
    file('/audio/{file}', {
      operationId: 'getAudioFile',
      summary: 'One audio file (the stream_url of a track)',
      description:
        'Answers byte ranges, so players can seek: a single Range gives 206 with Content-Range; a range past the end gives 416 with Content-Range: bytes */<size>. Several ranges in one request are answered with the whole file (200).',
      path: [{ name: 'file', description: 'File name, as in the stream_url of /audio/manifest.json.', example: 'track-slug.wav' }],
      responses: {
        200: { description: 'The whole file.', headers: ACCEPT_RANGES, content: binary },
        206: {
          description: 'The requested byte range.',
          headers: { 'Content-Range': { description: 'bytes <first>-<last>/<size>', schema: { type: 'string' } }, ...ACCEPT_RANGES },
          content: binary,
        },
      },
      errors: { ...missingFile, 416: ['RANGE_NOT_SATISFIABLE'] },
    }),
    file('/records/{id}.json', {
      operationId: 'getRecordJson',
      summary: 'One corpus work or divergence record as JSON',
      description:
        "Carries history: the record's revisions from the content's git history, newest first (date, commit, author, subject, what changed: added, tier C0 → C2, 2 answers appended), or history unavailable when the build had none (docs/CHANGES.md).",
      path: [recordId],
      responses: {
        200: ok(
          'A corpus work (with text and html) or a full divergence record (with synthesis_html).',
          { oneOf: [WorkDocumentSchema, DivergenceDocumentSchema] },
          CACHE_HEADER,
        ),
      },
      errors: missingFile,
    }),
    file('/records/{id}.md', {
      operationId: 'getRecordMarkdown',
      summary: 'One record as its Markdown source with frontmatter',
      description:
        "The source file byte for byte: its sha256 is the record's content_hash in /changes/ and what a federation peer verifies, so it carries no history; the record's revisions are in /records/{id}.json (history) and on its page.",
      path: [recordId],
      responses: { 200: textAnswer('Record source.', 'text/markdown') },
      errors: missingFile,
    }),
  ];
}
