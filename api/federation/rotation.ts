/**
 * Key rotation (docs/FEDERATION.md, "Keys and rotation"). A node that replaces its key publishes
 * a statement naming the retired key and the new one, signed by both: by the retired key, so a
 * puller that pinned it can trust the change; by the new key, so nobody can claim a key it does
 * not hold. The statements form a chain, oldest first, from the node's first key to its current
 * one; a puller follows it from the key it pinned.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { canonicalJson } from '../../core/canonical-json.ts';
import {
  FEDERATION_PROTOCOL,
  KeyRotationsDocumentSchema,
  type KeyRotationStatement,
  type KeyRotationsDocument,
  type SignedKeyRotation,
} from '../../schemas/federation.ts';
import type { SecretsStore } from '../../storage/secrets.ts';
import { KEY_SECRET_NAME, keyFromFile, keyFromSeed, keyIdOf, verifySignature, type NodeKey } from './keys.ts';

/** Where a node keeps the statements it publishes (a store secret by name: the store is shared by every process). */
export const ROTATIONS_SECRET_NAME = 'federation-key-rotations';
export const KEY_ROTATIONS_PATH = '/.well-known/polyphony-key-rotations.json';
/** A puller follows at most this many rotations from the key it pinned. */
export const MAX_ROTATION_CHAIN = 32;

export function signRotation(previous: NodeKey, next: NodeKey, origin: string, rotatedAt: Date): SignedKeyRotation {
  const statement: KeyRotationStatement = {
    protocol: FEDERATION_PROTOCOL,
    type: 'key-rotation',
    origin,
    previous: { key_id: previous.keyId, raw: previous.publicKey },
    next: { key_id: next.keyId, raw: next.publicKey },
    rotated_at: rotatedAt.toISOString(),
  };
  const bytes = canonicalJson(statement);
  return { statement, signature: previous.sign(bytes), next_signature: next.sign(bytes) };
}

/** Why a rotation does not carry a puller from its pinned key, or the chain of keys it does carry it through. */
export type RotationPath = { ok: true; keys: string[] } | { ok: false; reason: string };

/**
 * Follows the statements from `pinnedKey` (raw, base64url) to `currentKey`: each step must be a
 * statement for this origin whose previous key is the key reached so far, signed by it and by
 * the next key. Statements that do not continue the chain are ignored (a node may publish others).
 */
export function followRotations(document: KeyRotationsDocument, origin: string, pinnedKey: string, currentKey: string): RotationPath {
  const keys = [pinnedKey];
  let at = pinnedKey;
  while (at !== currentKey) {
    if (keys.length > MAX_ROTATION_CHAIN) return { ok: false, reason: `more than ${MAX_ROTATION_CHAIN} rotations from the pinned key` };
    const step = document.rotations.find((rotation) => rotation.statement.previous.raw === at && rotation.statement.origin === origin);
    if (!step) return { ok: false, reason: `no rotation statement for ${origin} names the key ${keyIdOf(Buffer.from(at, 'base64url'))} as the one it retires` };
    const { statement } = step;
    const bytes = canonicalJson(statement);
    if (statement.protocol !== FEDERATION_PROTOCOL) return { ok: false, reason: `a rotation statement speaks ${JSON.stringify(statement.protocol)}` };
    for (const side of [statement.previous, statement.next]) {
      if (keyIdOf(Buffer.from(side.raw, 'base64url')) !== side.key_id)
        return { ok: false, reason: `a rotation statement's key_id ${side.key_id} is not the hash of its key` };
    }
    if (!verifySignature(at, bytes, step.signature)) {
      return {
        ok: false,
        reason: `the rotation from ${statement.previous.key_id} to ${statement.next.key_id} is not signed by the pinned key ${statement.previous.key_id}`,
      };
    }
    if (!verifySignature(statement.next.raw, bytes, step.next_signature)) {
      return { ok: false, reason: `the rotation to ${statement.next.key_id} is not signed by that key` };
    }
    if (keys.includes(statement.next.raw)) return { ok: false, reason: 'the rotation statements go round in a circle' };
    keys.push(statement.next.raw);
    at = statement.next.raw;
  }
  return { ok: true, keys };
}

export async function readRotations(secrets: Pick<SecretsStore, 'findSecret'>): Promise<KeyRotationsDocument> {
  const stored = await secrets.findSecret(ROTATIONS_SECRET_NAME);
  return stored ? KeyRotationsDocumentSchema.parse(JSON.parse(stored)) : { protocol: FEDERATION_PROTOCOL, rotations: [] };
}

export interface RotateOptions {
  secrets: Pick<SecretsStore, 'secret' | 'findSecret' | 'replaceSecret'>;
  /** FEDERATION_KEY_FILE when the key is a file; else the key is the store's seed. */
  keyFile?: string | undefined;
  /** The origin the node signs for (FEDERATION_ORIGIN or site.base_url). */
  origin: string;
  now: Date;
}

/**
 * Replaces this node's key and publishes the signed statement: the statement is stored first,
 * then the key replaced, so a crash between the two leaves a statement for a key not yet in
 * use (harmless) rather than a new key with no statement (every puller would refuse it). A key
 * file is replaced by rename; the retired one stays beside it as <file>.retired-<key id>.
 */
export async function rotateNodeKey(options: RotateOptions): Promise<{ previous: NodeKey; next: NodeKey; rotation: SignedKeyRotation }> {
  const { secrets } = options;
  let previous: NodeKey;
  let next: NodeKey;
  let install: () => Promise<void>;
  if (options.keyFile) {
    if (!existsSync(options.keyFile))
      throw new Error(`${options.keyFile} does not exist: there is no key to rotate yet (start the server once, or pull, to create it)`);
    const file = options.keyFile;
    previous = keyFromFile(file);
    const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    const staged = `${file}.next`;
    writeFileSync(staged, pem, { mode: 0o600 });
    next = keyFromFile(staged);
    install = async () => {
      writeFileSync(`${file}.retired-${previous.keyId}`, readFileSync(file), { mode: 0o600 });
      renameSync(staged, file);
    };
  } else {
    previous = keyFromSeed(await secrets.secret(KEY_SECRET_NAME));
    const seed = randomBytes(32).toString('hex');
    next = keyFromSeed(seed);
    install = () => secrets.replaceSecret(KEY_SECRET_NAME, seed);
  }
  const rotation = signRotation(previous, next, options.origin, options.now);
  const document = await readRotations(secrets);
  document.rotations.push(rotation);
  await secrets.replaceSecret(ROTATIONS_SECRET_NAME, JSON.stringify(document));
  await install();
  return { previous, next, rotation };
}
