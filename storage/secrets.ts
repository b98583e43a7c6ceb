/** Per-deployment secrets, e.g. the salt for client hashes; created on first use. */
export interface SecretsStore {
  /** A random per-deployment secret (created on first use), e.g. the salt for client hashes. */
  secret(name: string): Promise<string>;
}
