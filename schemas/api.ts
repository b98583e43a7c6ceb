/**
 * Response (and request) bodies of the HTTP API, as zod 4 schemas, split by concern under
 * schemas/api/. They are the single description of every JSON shape the API serves: each route
 * (api/routes/) names the schemas of its requests and responses, handlers send their inferred
 * types, and api/openapi.ts turns the named ones (`apiSchemas`) into the components of
 * /openapi.json with z.toJSONSchema; the contract tests validate real responses against that document.
 *
 * Field descriptions quote the interface specification (spec §2, §4, §7) where it has a note.
 * Objects whose shape the code fixes are strict, so an added or missing field is caught;
 * objects the spec leaves open ("not shown") allow additional properties.
 * `<PFX>` in a description is replaced by the deployment's id prefix in /openapi.json.
 *
 * This index imports every part, so importing it registers every named component.
 */
export type { ErrorCode } from './errors.ts';
export type { Justification } from './limits.ts';
export * from './api/common.ts';
export * from './api/errors.ts';
export * from './api/orientation.ts';
export * from './api/ops.ts';
export * from './api/query.ts';
export * from './api/live.ts';
export * from './api/atlas.ts';
export * from './api/tensions.ts';
export * from './api/static.ts';
export * from './api/contributions.ts';
export * from './api/requests.ts';
export * from './api/changes.ts';
export * from './api/record-history.ts';
export * from './api/feeds.ts';
