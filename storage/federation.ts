/** Records pulled from peers waiting for a curator, and the peers pinned by a puller (docs/FEDERATION.md). */

export type ImportStatus = 'pending' | 'approved' | 'rejected' | 'superseded';

/** A record pulled from a peer, verified, waiting for a curator. */
export interface FederationImport {
  id: string;
  /** The origin node id (`pn1:<key id>`) and its origin URL. */
  origin_node: string;
  origin: string;
  /** The record id at the origin (namespaced by the origin's prefix). */
  record_id: string;
  /** sha256 of `markdown`'s UTF-8 bytes, as the origin's signed manifest lists it. */
  content_hash: string;
  /** The verified record twin, verbatim. */
  markdown: string;
  /** Signature, key, licence and attribution, as approval writes them into content/. */
  provenance: Record<string, unknown>;
  status: ImportStatus;
  staged_at: string;
  reviewed_at: string | null;
  reviewer: string | null;
  reason: string | null;
}

/**
 * What a puller remembers of a peer: the key first seen for its origin (or pinned by the
 * operator before any pull: then `public_key` is '' until the first pull fills it, and
 * `node_id` names the key), its newest accepted manifest's signing time and corpus revision
 * ('' before any; the next pull asks the peer for the records changed since that revision).
 */
export interface FederationPeer {
  origin: string;
  node_id: string;
  public_key: string;
  last_signed_at: string;
  last_corpus_rev: string;
}

/** What staging writes of a peer: without `last_corpus_rev` (a pushed offer, not a manifest) the recorded one is kept. */
export type PeerUpdate = Omit<FederationPeer, 'last_corpus_rev'> & { last_corpus_rev?: string };

/** Whether a pinned peer's key is this one: the same raw key, or (pinned by key id only) the same node id. */
export function pinMatches(pinned: Pick<FederationPeer, 'node_id' | 'public_key'>, peer: Pick<FederationPeer, 'node_id' | 'public_key'>): boolean {
  return pinned.public_key === '' ? pinned.node_id === peer.node_id : pinned.public_key === peer.public_key;
}

export type NewImport = Omit<FederationImport, 'status' | 'reviewed_at' | 'reviewer' | 'reason'>;

/** Pending imports and peers; part of every Store (both drivers). */
export interface FederationStore {
  getPeer(origin: string): Promise<FederationPeer | undefined>;
  /**
   * Stages the imports of one pull and moves the peer's last accepted manifest (and, when given, its corpus revision) to `peer`, in one
   * transaction. An import already known by (origin node, record id, content hash) is skipped;
   * a new version supersedes a pending older one. Refused (false, nothing written) when the
   * store already holds a newer manifest of that origin, or a different key for it.
   */
  stageImports(peer: PeerUpdate, imports: readonly NewImport[]): Promise<{ accepted: boolean; staged: FederationImport[] }>;
  /**
   * Pins a key for an origin before any pull (`npm run federate -- trust`): 'pinned' when new,
   * 'same' when that key is already pinned, 'conflict' (nothing written) when another is.
   */
  trustPeer(origin: string, nodeId: string): Promise<'pinned' | 'same' | 'conflict'>;
  /** Moves an origin's pin from one key to the next after a verified rotation; false (nothing written) when the pin is no longer `from`. */
  rotatePeer(origin: string, from: Pick<FederationPeer, 'node_id' | 'public_key'>, to: Pick<FederationPeer, 'node_id' | 'public_key'>): Promise<boolean>;
  /** Content hashes already known per record id of an origin node (any status). */
  knownImports(originNode: string): Promise<Map<string, Set<string>>>;
  getImport(id: string): Promise<FederationImport | undefined>;
  listImports(status?: ImportStatus): Promise<FederationImport[]>;
  reviewImport(id: string, decision: { status: 'approved' | 'rejected'; reviewer: string; reason: string }, now: Date): Promise<FederationImport | undefined>;
}

export const IMPORT_COLUMNS = 'id, origin_node, origin, record_id, content_hash, markdown, provenance, status, staged_at, reviewed_at, reviewer, reason';

/** An import row as both drivers return it; `json` parses a column the driver keeps as text. */
export function toImport(row: Record<string, unknown>, json: (value: unknown) => unknown): FederationImport {
  const text = (name: string) => row[name] as string;
  const nullable = (name: string) => (row[name] as string | null | undefined) ?? null;
  return {
    id: text('id'),
    origin_node: text('origin_node'),
    origin: text('origin'),
    record_id: text('record_id'),
    content_hash: text('content_hash'),
    markdown: text('markdown'),
    provenance: json(row.provenance) as Record<string, unknown>,
    status: text('status') as ImportStatus,
    staged_at: text('staged_at'),
    reviewed_at: nullable('reviewed_at'),
    reviewer: nullable('reviewer'),
    reason: nullable('reason'),
  };
}
