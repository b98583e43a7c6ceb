/**
 * Every route's spec, in the order of the app's route table: for a description of the
 * interface without an app (the fuzz suites list operations when tests are collected).
 * test/openapi.test.ts checks that it equals the specs of the running app's table.
 */
import { MCP_ROUTE } from '../mcp/http.ts';
import { CONTRIBUTE, INVITE, PLAY, STORE } from './contribute.ts';
import { ROBOTS, SITEMAP, WELL_KNOWN_LLMS } from './crawlers.ts';
import { DISPOSITIONS } from './dispositions.ts';
import { CHANGES } from './changes.ts';
import { DIVERGENCE_SEARCH, DIVERGENCES } from './divergences.ts';
import { FEDERATION_MANIFEST, FEDERATION_OFFER, FEDERATION_SIGNATURE, KEY_ROTATIONS_ROUTE, NODE_DOCUMENT_ROUTE } from './federation.ts';
import { KIN } from './kin.ts';
import { LINEAGE } from './lineage.ts';
import { CANCEL_JOB, COUNCIL, TRACE } from './live.ts';
import { AGENT_ENTRY, HEALTH, INFO, MANIFEST } from './orientation.ts';
import { READY } from './ops.ts';
import { QUERY } from './query.ts';
import { CONCEPT_INDEX, CONCEPT_INDEX_NO_SLASH, OPENAPI } from './static.ts';
import { TENSIONS } from './tensions.ts';
import type { RouteSpec } from './types.ts';

export const ROUTE_SPECS: readonly RouteSpec[] = [
  AGENT_ENTRY,
  HEALTH,
  MANIFEST,
  INFO,
  READY,
  QUERY,
  DIVERGENCES,
  DIVERGENCE_SEARCH,
  KIN,
  TENSIONS,
  LINEAGE,
  DISPOSITIONS,
  CHANGES,
  COUNCIL,
  TRACE,
  CANCEL_JOB,
  CONTRIBUTE,
  STORE,
  INVITE,
  PLAY,
  MCP_ROUTE,
  NODE_DOCUMENT_ROUTE,
  FEDERATION_MANIFEST,
  FEDERATION_SIGNATURE,
  KEY_ROTATIONS_ROUTE,
  FEDERATION_OFFER,
  OPENAPI,
  CONCEPT_INDEX,
  CONCEPT_INDEX_NO_SLASH,
  ROBOTS,
  SITEMAP,
  WELL_KNOWN_LLMS,
];
