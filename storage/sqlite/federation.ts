/** Pending federation imports and peers on SQLite (the FederationStore part of the store). */
import {
  IMPORT_COLUMNS as COLUMNS,
  pinMatches,
  toImport as fromRow,
  type FederationImport,
  type FederationPeer,
  type FederationStore,
  type ImportStatus,
} from '../federation.ts';
import { parseJson, type Database, type Transaction } from './db.ts';

const toImport = (row: Record<string, unknown>) => fromRow(row, parseJson);

export function createSqliteFederation(db: Database, transaction: Transaction): FederationStore {
  const statements = {
    getPeer: db.prepare('SELECT origin, node_id, public_key, last_signed_at, last_corpus_rev FROM federation_peers WHERE origin = ?'),
    putPeer: db.prepare(`INSERT INTO federation_peers (origin, node_id, public_key, last_signed_at, last_corpus_rev) VALUES (?, ?, ?, ?, COALESCE(?, ''))
      ON CONFLICT(origin) DO UPDATE SET last_signed_at = excluded.last_signed_at, public_key = excluded.public_key,
        last_corpus_rev = COALESCE(?, federation_peers.last_corpus_rev)`),
    trust: db.prepare("INSERT OR IGNORE INTO federation_peers (origin, node_id, public_key, last_signed_at) VALUES (?, ?, '', '')"),
    rotate: db.prepare('UPDATE federation_peers SET node_id = ?, public_key = ? WHERE origin = ? AND node_id = ? AND public_key = ?'),
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
      return row
        ? { origin: row.origin, node_id: row.node_id, public_key: row.public_key, last_signed_at: row.last_signed_at, last_corpus_rev: row.last_corpus_rev }
        : undefined;
    },
    async stageImports(peer, imports) {
      return transaction(() => {
        const known = statements.getPeer.get(peer.origin) as FederationPeer | undefined;
        if (known && (!pinMatches(known, peer) || known.last_signed_at > peer.last_signed_at)) return { accepted: false, staged: [] };
        const rev = peer.last_corpus_rev ?? null;
        statements.putPeer.run(peer.origin, peer.node_id, peer.public_key, peer.last_signed_at, rev, rev);
        const staged: FederationImport[] = [];
        for (const item of imports) {
          if (statements.known.get(item.origin_node, item.record_id, item.content_hash)) continue;
          statements.supersede.run(item.origin_node, item.record_id);
          statements.insert.run(
            item.id,
            item.origin_node,
            item.origin,
            item.record_id,
            item.content_hash,
            item.markdown,
            JSON.stringify(item.provenance),
            item.staged_at,
          );
          staged.push(toImport(statements.byId.get(item.id) as Record<string, unknown>));
        }
        return { accepted: true, staged };
      });
    },
    async trustPeer(origin, nodeId) {
      return transaction(() => {
        if (statements.trust.run(origin, nodeId).changes === 1) return 'pinned' as const;
        return (statements.getPeer.get(origin) as FederationPeer).node_id === nodeId ? ('same' as const) : ('conflict' as const);
      });
    },
    async rotatePeer(origin, from, to) {
      return statements.rotate.run(to.node_id, to.public_key, origin, from.node_id, from.public_key).changes === 1;
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
