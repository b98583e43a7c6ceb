/** Per-deployment secrets, e.g. the salt for client hashes; created on first use. */
export interface SecretsStore {
  /** A random per-deployment secret (created on first use), e.g. the salt for client hashes. */
  secret(name: string): Promise<string>;
  /** A secret's value if it was ever set or created, without creating it. */
  findSecret(name: string): Promise<string | undefined>;
  /** Sets a secret's value (the federation key on rotation; its published rotation statements). */
  replaceSecret(name: string, value: string): Promise<void>;
}
