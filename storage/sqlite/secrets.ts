/** Per-deployment secrets on SQLite: the first writer's value wins. */
import { randomBytes } from 'node:crypto';
import type { SecretsStore } from '../secrets.ts';
import type { Database } from './db.ts';

export function createSqliteSecrets(db: Database): SecretsStore {
  const put = db.prepare('INSERT OR IGNORE INTO secrets (name, value) VALUES (?, ?)');
  const get = db.prepare('SELECT value FROM secrets WHERE name = ?');
  const replace = db.prepare('INSERT INTO secrets (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value');
  return {
    async findSecret(name) {
      return (get.get(name) as { value: string } | undefined)?.value;
    },
    async replaceSecret(name, value) {
      replace.run(name, value);
    },
    async secret(name) {
      put.run(name, randomBytes(32).toString('hex'));
      return (get.get(name) as { value: string }).value;
    },
  };
}
