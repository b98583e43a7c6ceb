/**
 * The deployment's Ed25519 key pair (node:crypto). The private key is a PKCS#8 PEM file named
 * by FEDERATION_KEY_FILE (written 0600 on first start), or derived from a 32-byte seed kept as
 * a store secret. It is used only to sign; nothing serves or logs it.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface NodeKey {
  /** Raw 32-byte public key, base64url. */
  publicKey: string;
  keyId: string;
  nodeId: string;
  sign(data: string): string;
}

/** The DER header of a PKCS#8 Ed25519 private key; the 32-byte seed follows it. */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
/** The DER header of an SPKI Ed25519 public key; the 32 raw bytes follow it. */
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export const KEY_SECRET_NAME = 'federation-ed25519-seed';

export function keyIdOf(rawPublicKey: Buffer): string {
  return createHash('sha256').update(rawPublicKey).digest('hex').slice(0, 32);
}

export function nodeIdOf(keyId: string): string {
  return `pn1:${keyId}`;
}

function fromPrivateKey(privateKey: KeyObject): NodeKey {
  const raw = createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(SPKI_ED25519_PREFIX.length);
  const keyId = keyIdOf(raw);
  return {
    publicKey: raw.toString('base64url'),
    keyId,
    nodeId: nodeIdOf(keyId),
    sign: (data) => sign(null, Buffer.from(data, 'utf8'), privateKey).toString('base64url'),
  };
}

/** A key from a 32-byte seed (the store secret is 64 hex digits). */
export function keyFromSeed(seedHex: string): NodeKey {
  const seed = Buffer.from(seedHex, 'hex');
  if (seed.length !== 32) throw new Error('the federation key seed must be 32 bytes (64 hex digits)');
  return fromPrivateKey(createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' }));
}

/** The key in a PEM file, generating the file (mode 0600) when it does not exist. */
export function keyFromFile(file: string): NodeKey {
  if (!existsSync(file)) {
    const { privateKey } = generateKeyPairSync('ed25519');
    mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    try {
      writeFileSync(file, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600, flag: 'wx' });
    } catch (error) {
      // Another process (WORKERS=n) created it first: use that one.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  const privateKey = createPrivateKey(readFileSync(file));
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`${file} is not an Ed25519 private key`);
  return fromPrivateKey(privateKey);
}

export async function loadNodeKey(options: { keyFile?: string | undefined; secret: (name: string) => Promise<string> }): Promise<NodeKey> {
  return options.keyFile ? keyFromFile(options.keyFile) : keyFromSeed(await options.secret(KEY_SECRET_NAME));
}

/** Whether `signature` (base64url) is an Ed25519 signature of `data` by the raw public key (base64url). */
export function verifySignature(publicKey: string, data: string, signature: string): boolean {
  const raw = Buffer.from(publicKey, 'base64url');
  if (raw.length !== 32) return false;
  try {
    const key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: 'der', type: 'spki' });
    return verify(null, Buffer.from(data, 'utf8'), key, Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}
