/**
 * This deployment as a federation node: the node document and the signed manifest of
 * docs/FEDERATION.md, computed from the read model and the record twins. Twin hashes and
 * record signatures are computed once; a manifest is signed once per signing window.
 */
import { changesSince } from '../../core/changes.ts';
import { sha256Hex } from '../../core/manifest.ts';
import type { ChangeHistory } from '../../schemas/api/changes.ts';
import {
  FEDERATION_PROTOCOL,
  type FederationManifest,
  type KeyRotationsDocument,
  type ManifestSignature,
  type NodeDocument,
} from '../../schemas/federation.ts';
import type { Corpus } from '../load-artifacts.ts';
import type { NodeKey } from './keys.ts';
import { signingWindow, signManifest, signRecord } from './protocol.ts';
import { KEY_ROTATIONS_PATH } from './rotation.ts';

export interface FederationNodeOptions {
  corpus: Corpus;
  /** The key, loaded on first use (it may live in the store). */
  key: () => Promise<NodeKey>;
  /** The record twin bytes as served (api/load-artifacts.ts `readRecordTwin`). */
  readTwin: (id: string, suffix: '.md' | '.origin.md') => Buffer | undefined;
  /** FEDERATION_ORIGIN, else site.base_url, else the request's own origin. */
  origin?: string | undefined;
  /** Whether POST /api/federation/offer accepts offers (listed in `offers`). */
  push?: boolean;
  /** The key rotation statements this node publishes (rotation.ts); none when absent. */
  rotations?: () => Promise<KeyRotationsDocument>;
  /** The content's history (api/changes-file.ts): a manifest asked `since` a revision it holds lists only what changed. */
  history?: () => ChangeHistory;
}

export interface SignedManifest {
  manifest: FederationManifest;
  signature: ManifestSignature;
}

export interface FederationNode {
  origin(requestOrigin: string): string;
  nodeDocument(requestOrigin: string): Promise<NodeDocument>;
  /**
   * The manifest of the current signing window. With `since` a revision the history holds, it
   * lists only the records added or changed since then and says so (`since`); with one it does
   * not hold (or no history), every record, as without.
   */
  signedManifest(requestOrigin: string, now: Date, since?: string): Promise<SignedManifest>;
  keyRotations(): Promise<KeyRotationsDocument>;
}

export function createFederationNode(options: FederationNodeOptions): FederationNode {
  const { corpus } = options;
  const configured = options.origin ?? (corpus.site.base_url ? new URL(corpus.site.base_url).origin : undefined);
  let key: Promise<NodeKey> | undefined;
  const getKey = () => (key ??= options.key());
  let entries: Promise<{ records: FederationManifest['records']; imports: FederationManifest['imports'] }> | undefined;
  const cache = new Map<string, SignedManifest>();
  const attribution = corpus.site.attribution ?? `${corpus.site.name}, licensed ${corpus.site.license.corpus}`;

  async function computeEntries() {
    const nodeKey = await getKey();
    const records: FederationManifest['records'] = [];
    const imports: FederationManifest['imports'] = [];
    for (const record of corpus.divergences) {
      const federation = (record.provenance as { federation?: { origin: string; origin_node: string; content_hash: string } } | undefined)?.federation;
      if (federation) {
        imports.push({
          id: record.id,
          origin: federation.origin,
          origin_node: federation.origin_node,
          sha256: federation.content_hash,
          url: `/records/${record.id}.origin.md`,
        });
        continue;
      }
      // Records persisted at run time have no static twin until exported and built.
      const bytes = options.readTwin(record.id, '.md');
      if (!bytes) continue;
      const sha256 = sha256Hex(bytes);
      records.push({ id: record.id, sha256, bytes: bytes.length, url: `/records/${record.id}.md`, signature: signRecord(nodeKey, record.id, sha256) });
    }
    const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    return { records: records.sort(byId), imports: imports.sort(byId) };
  }

  const origin = (requestOrigin: string) => configured ?? requestOrigin;

  /** The Atlas records added or changed since a revision the history holds; undefined when it holds none such. */
  function changedSince(since: string): Set<string> | undefined {
    const history = options.history?.();
    if (!history) return undefined;
    const outcome = changesSince(history, since);
    if (outcome.kind !== 'delta') return undefined;
    const { added, changed } = outcome.delta;
    return new Set([...added, ...changed].filter((change) => change.kind === 'divergence').map((change) => change.id));
  }

  const keyRotations = async (): Promise<KeyRotationsDocument> => (await options.rotations?.()) ?? { protocol: FEDERATION_PROTOCOL, rotations: [] };

  return {
    origin,
    keyRotations,
    async nodeDocument(requestOrigin) {
      const nodeKey = await getKey();
      const rotated = (await keyRotations()).rotations.length > 0;
      return {
        protocol: FEDERATION_PROTOCOL,
        node_id: nodeKey.nodeId,
        origin: origin(requestOrigin),
        name: corpus.site.name,
        id_prefix: corpus.site.id_prefix,
        counts: { atlas_records: corpus.manifest.counts.atlas.live_records, works: corpus.manifest.counts.corpus.total_works },
        licences: { code: corpus.site.license.code, data: corpus.site.license.corpus },
        attribution,
        offers: options.push ? ['pull', 'push'] : ['pull'],
        public_key: { algorithm: 'ed25519', key_id: nodeKey.keyId, raw: nodeKey.publicKey },
        manifest_url: '/federation/manifest.json',
        signature_url: '/federation/manifest.sig',
        ...(rotated ? { key_rotations_url: KEY_ROTATIONS_PATH } : {}),
      };
    },
    async signedManifest(requestOrigin, now, since) {
      const nodeKey = await getKey();
      const { signedAt, expiresAt } = signingWindow(now);
      const changed = since === undefined ? undefined : changedSince(since);
      const cacheKey = `${signedAt} ${origin(requestOrigin)} ${changed ? since : ''}`;
      const cached = cache.get(cacheKey);
      if (cached) return cached;
      const all = await (entries ??= computeEntries());
      const records = changed ? all.records.filter((entry) => changed.has(entry.id)) : all.records;
      const manifest: FederationManifest = {
        protocol: FEDERATION_PROTOCOL,
        node_id: nodeKey.nodeId,
        origin: origin(requestOrigin),
        id_prefix: corpus.site.id_prefix,
        key_id: nodeKey.keyId,
        signed_at: signedAt,
        expires_at: expiresAt,
        corpus_rev: corpus.manifest.published_releases.corpus_rev,
        ...(changed ? { since } : {}),
        counts_hash: corpus.manifest.hashes.manifest,
        licence: corpus.site.license.corpus,
        attribution,
        records,
        imports: all.imports,
      };
      const signed = { manifest, signature: signManifest(nodeKey, manifest) };
      // One window at a time, a few origins at most (Host headers are the client's to choose).
      if (cache.size >= 8) cache.clear();
      cache.set(cacheKey, signed);
      return signed;
    },
  };
}
