/** Per-deployment secrets on PostgreSQL: the first writer's value wins. */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { SecretsStore } from '../secrets.ts';

export function createPostgresSecrets(pool: pg.Pool): SecretsStore {
  return {
    async findSecret(name) {
      const { rows } = await pool.query<{ value: string }>('SELECT value FROM secrets WHERE name = $1', [name]);
      return rows[0]?.value;
    },
    async replaceSecret(name, value) {
      await pool.query('INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value', [name, value]);
    },
    async secret(name) {
      await pool.query('INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT DO NOTHING', [name, randomBytes(32).toString('hex')]);
      const { rows } = await pool.query<{ value: string }>('SELECT value FROM secrets WHERE name = $1', [name]);
      return rows[0]!.value;
    },
  };
}
