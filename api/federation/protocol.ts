/**
 * The signed documents of docs/FEDERATION.md: the record statement, the manifest and its
 * signature, and their verification. Pure apart from the crypto primitives of keys.ts.
 */
import { canonicalJson } from '../../core/canonical-json.ts';
import { sha256Hex } from '../../core/manifest.ts';
import { FEDERATION_PROTOCOL, type FederationManifest, type ManifestSignature } from '../../schemas/federation.ts';
import { verifySignature, type NodeKey } from './keys.ts';

/** Manifests are signed for a 10-minute window and valid for an hour. */
export const SIGNING_WINDOW_MS = 10 * 60_000;
export const MANIFEST_VALIDITY_MS = 60 * 60_000;

export function recordStatement(nodeId: string, id: string, sha256: string): string {
  return canonicalJson({ protocol: FEDERATION_PROTOCOL, node_id: nodeId, id, sha256 });
}

export function signRecord(key: NodeKey, id: string, sha256: string): string {
  return key.sign(recordStatement(key.nodeId, id, sha256));
}

export function verifyRecordSignature(publicKey: string, nodeId: string, id: string, sha256: string, signature: string): boolean {
  return verifySignature(publicKey, recordStatement(nodeId, id, sha256), signature);
}

export function signingWindow(now: Date): { signedAt: string; expiresAt: string } {
  const start = Math.floor(now.getTime() / SIGNING_WINDOW_MS) * SIGNING_WINDOW_MS;
  return { signedAt: new Date(start).toISOString(), expiresAt: new Date(start + MANIFEST_VALIDITY_MS).toISOString() };
}

export function signManifest(key: NodeKey, manifest: FederationManifest): ManifestSignature {
  const bytes = canonicalJson(manifest);
  return { algorithm: 'ed25519', key_id: key.keyId, manifest_sha256: sha256Hex(bytes), signature: key.sign(bytes) };
}

/** Whether the signature document signs exactly this manifest with this public key. */
export function verifyManifestSignature(publicKey: string, manifest: unknown, signature: ManifestSignature): boolean {
  const bytes = canonicalJson(manifest);
  return sha256Hex(bytes) === signature.manifest_sha256 && verifySignature(publicKey, bytes, signature.signature);
}
