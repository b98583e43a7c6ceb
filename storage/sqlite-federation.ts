/** Pending federation imports and peers on SQLite (the FederationStore part of the store). */
import type { FederationImport, FederationPeer, FederationStore, ImportStatus } from './store.ts';

interface Statement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
}

export const FEDERATION_SCHEMA = `
CREATE TABLE IF NOT EXISTS federation_peers (
  origin TEXT PRIMARY KEY, node_id TEXT NOT NULL, public_key TEXT NOT NULL, last_signed_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS federation_imports (
  id TEXT PRIMARY KEY, origin_node TEXT NOT NULL, origin TEXT NOT NULL, record_id TEXT NOT NULL,
  content_hash TEXT NOT NULL, markdown TEXT NOT NULL, provenance TEXT NOT NULL, status TEXT NOT NULL,
  staged_at TEXT NOT NULL, reviewed_at TEXT, reviewer TEXT, reason TEXT,
  UNIQUE (origin_node, record_id, content_hash)
);
`;

const COLUMNS = 'id, origin_node, origin, record_id, content_hash, markdown, provenance, status, staged_at, reviewed_at, reviewer, reason';

function toImport(row: Record<string, unknown>): FederationImport {
  const text = (name: string) => row[name] as string;
  const nullable = (name: string) => (row[name] as string | null) ?? null;
  return {
    id: text('id'),
    origin_node: text('origin_node'),
    origin: text('origin'),
    record_id: text('record_id'),
    content_hash: text('content_hash'),
    markdown: text('markdown'),
    provenance: JSON.parse(text('provenance')) as Record<string, unknown>,
    status: text('status') as FederationImport['status'],
    staged_at: text('staged_at'),
    reviewed_at: nullable('reviewed_at'),
    reviewer: nullable('reviewer'),
    reason: nullable('reason'),
  };
}

export function createSqliteFederation(db: Database, transaction: <T>(work: () => T) => T): FederationStore {
  db.exec(FEDERATION_SCHEMA);
  const statements = {
    getPeer: db.prepare('SELECT origin, node_id, public_key, last_signed_at FROM federation_peers WHERE origin = ?'),
    putPeer: db.prepare(`INSERT INTO federation_peers (origin, node_id, public_key, last_signed_at) VALUES (?, ?, ?, ?)
      ON CONFLICT(origin) DO UPDATE SET last_signed_at = excluded.last_signed_at`),
    known: db.prepare('SELECT 1 FROM federation_imports WHERE origin_node = ? AND record_id = ? AND content_hash = ?'),
    supersede: db.prepare("UPDATE federation_imports SET status = 'superseded' WHERE origin_node = ? AND record_id = ? AND status = 'pending'"),
    insert: db.prepare(`INSERT INTO federation_imports (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, NULL, NULL, NULL)`),
    byId: db.prepare(`SELECT ${COLUMNS} FROM federation_imports WHERE id = ?`),
    hashes: db.prepare('SELECT record_id, content_hash FROM federation_imports WHERE origin_node = ?'),
    listAll: db.prepare(`SELECT ${COLUMNS} FROM federation_imports ORDER BY staged_at, record_id, id`),
    listStatus: db.prepare(`SELECT ${COLUMNS} FROM federation_imports WHERE status = ? ORDER BY staged_at, record_id, id`),
    review: db.prepare("UPDATE federation_imports SET status = ?, reviewer = ?, reason = ?, reviewed_at = ? WHERE id = ? AND status = 'pending'"),
  };
  return {
    async getPeer(origin) {
      const row = statements.getPeer.get(origin) as FederationPeer | undefined;
      return row ? { origin: row.origin, node_id: row.node_id, public_key: row.public_key, last_signed_at: row.last_signed_at } : undefined;
    },
    async stageImports(peer, imports) {
      return transaction(() => {
        const known = statements.getPeer.get(peer.origin) as { public_key: string; last_signed_at: string } | undefined;
        if (known && (known.public_key !== peer.public_key || known.last_signed_at > peer.last_signed_at)) return { accepted: false, staged: [] };
        statements.putPeer.run(peer.origin, peer.node_id, peer.public_key, peer.last_signed_at);
        const staged: FederationImport[] = [];
        for (const item of imports) {
          if (statements.known.get(item.origin_node, item.record_id, item.content_hash)) continue;
          statements.supersede.run(item.origin_node, item.record_id);
          statements.insert.run(item.id, item.origin_node, item.origin, item.record_id, item.content_hash, item.markdown, JSON.stringify(item.provenance), item.staged_at);
          staged.push(toImport(statements.byId.get(item.id) as Record<string, unknown>));
        }
        return { accepted: true, staged };
      });
    },
    async knownImports(originNode) {
      const known = new Map<string, Set<string>>();
      for (const row of statements.hashes.all(originNode) as { record_id: string; content_hash: string }[]) {
        known.set(row.record_id, (known.get(row.record_id) ?? new Set()).add(row.content_hash));
      }
      return known;
    },
    async getImport(id) {
      const row = statements.byId.get(id) as Record<string, unknown> | undefined;
      return row ? toImport(row) : undefined;
    },
    async listImports(status?: ImportStatus) {
      const rows = (status ? statements.listStatus.all(status) : statements.listAll.all()) as Record<string, unknown>[];
      return rows.map(toImport);
    },
    async reviewImport(id, decision, now) {
      statements.review.run(decision.status, decision.reviewer, decision.reason, now.toISOString(), id);
      const row = statements.byId.get(id) as Record<string, unknown> | undefined;
      return row ? toImport(row) : undefined;
    },
  };
}
