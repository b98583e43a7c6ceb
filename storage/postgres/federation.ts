/** Pending federation imports and peers on PostgreSQL (the FederationStore part of the store). */
import { IMPORT_COLUMNS as COLUMNS, pinMatches, type FederationImport, type FederationPeer, type FederationStore } from '../federation.ts';
import type { Queryable, Transaction } from './db.ts';

export function createPostgresFederation(pool: Queryable, transaction: Transaction): FederationStore {
  async function getImport(id: string): Promise<FederationImport | undefined> {
    const { rows } = await pool.query<FederationImport>(`SELECT ${COLUMNS} FROM federation_imports WHERE id = $1`, [id]);
    return rows[0];
  }
  return {
    async getPeer(origin) {
      const { rows } = await pool.query<FederationPeer>(
        'SELECT origin, node_id, public_key, last_signed_at, last_corpus_rev FROM federation_peers WHERE origin = $1',
        [origin],
      );
      return rows[0];
    },
    async trustPeer(origin, nodeId) {
      const inserted = await pool.query(
        "INSERT INTO federation_peers (origin, node_id, public_key, last_signed_at) VALUES ($1, $2, '', '') ON CONFLICT DO NOTHING",
        [origin, nodeId],
      );
      if (inserted.rowCount === 1) return 'pinned';
      const { rows } = await pool.query<{ node_id: string }>('SELECT node_id FROM federation_peers WHERE origin = $1', [origin]);
      return rows[0]?.node_id === nodeId ? 'same' : 'conflict';
    },
    async rotatePeer(origin, from, to) {
      const updated = await pool.query('UPDATE federation_peers SET node_id = $1, public_key = $2 WHERE origin = $3 AND node_id = $4 AND public_key = $5', [
        to.node_id,
        to.public_key,
        origin,
        from.node_id,
        from.public_key,
      ]);
      return updated.rowCount === 1;
    },
    async stageImports(peer, imports) {
      return transaction(async (client) => {
        // One pull of an origin at a time, across processes.
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`federation:${peer.origin}`]);
        const { rows } = await client.query<FederationPeer>('SELECT node_id, public_key, last_signed_at FROM federation_peers WHERE origin = $1', [
          peer.origin,
        ]);
        const known = rows[0];
        if (known && (!pinMatches(known, peer) || known.last_signed_at > peer.last_signed_at)) return { accepted: false, staged: [] };
        await client.query(
          `INSERT INTO federation_peers (origin, node_id, public_key, last_signed_at, last_corpus_rev) VALUES ($1, $2, $3, $4, COALESCE($5, ''))
           ON CONFLICT (origin) DO UPDATE SET last_signed_at = EXCLUDED.last_signed_at, public_key = EXCLUDED.public_key,
             last_corpus_rev = COALESCE($5, federation_peers.last_corpus_rev)`,
          [peer.origin, peer.node_id, peer.public_key, peer.last_signed_at, peer.last_corpus_rev ?? null],
        );
        const staged: FederationImport[] = [];
        for (const item of imports) {
          const exists = await client.query('SELECT 1 FROM federation_imports WHERE origin_node = $1 AND record_id = $2 AND content_hash = $3', [
            item.origin_node,
            item.record_id,
            item.content_hash,
          ]);
          if (exists.rowCount) continue;
          await client.query("UPDATE federation_imports SET status = 'superseded' WHERE origin_node = $1 AND record_id = $2 AND status = 'pending'", [
            item.origin_node,
            item.record_id,
          ]);
          const inserted = await client.query<FederationImport>(
            `INSERT INTO federation_imports (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, NULL, NULL, NULL) RETURNING ${COLUMNS}`,
            [item.id, item.origin_node, item.origin, item.record_id, item.content_hash, item.markdown, JSON.stringify(item.provenance), item.staged_at],
          );
          staged.push(inserted.rows[0]!);
        }
        return { accepted: true, staged };
      });
    },
    async knownImports(originNode) {
      const { rows } = await pool.query<{ record_id: string; content_hash: string }>(
        'SELECT record_id, content_hash FROM federation_imports WHERE origin_node = $1',
        [originNode],
      );
      const known = new Map<string, Set<string>>();
      for (const row of rows) known.set(row.record_id, (known.get(row.record_id) ?? new Set()).add(row.content_hash));
      return known;
    },
    getImport,
    async listImports(status) {
      const { rows } = status
        ? await pool.query<FederationImport>(`SELECT ${COLUMNS} FROM federation_imports WHERE status = $1 ORDER BY staged_at, record_id, id`, [status])
        : await pool.query<FederationImport>(`SELECT ${COLUMNS} FROM federation_imports ORDER BY staged_at, record_id, id`);
      return rows;
    },
    async reviewImport(id, decision, now) {
      await pool.query("UPDATE federation_imports SET status = $1, reviewer = $2, reason = $3, reviewed_at = $4 WHERE id = $5 AND status = 'pending'", [
        decision.status,
        decision.reviewer,
        decision.reason,
        now.toISOString(),
        id,
      ]);
      return getImport(id);
    },
  };
}
