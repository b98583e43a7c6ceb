/**
 * Verification of a deployment (`npm run verify -- <url>`): the node document, the manifest
 * signature, every record twin against the signed hash and record signature, and every import's
 * origin bytes against its provenance. Every mismatch is named; nothing stops at the first.
 */
import {
  FEDERATION_PROTOCOL,
  FederationManifestSchema,
  FederationProvenanceSchema,
  ManifestSignatureSchema,
  NodeDocumentSchema,
} from '../../schemas/federation.ts';
import { sha256Hex } from '../../core/manifest.ts';
import { FederationError } from './errors.ts';
import type { Fetcher } from './fetch.ts';
import { keyIdOf } from './keys.ts';
import { verifyManifestSignature, verifyRecordSignature } from './protocol.ts';

export interface VerifyReport {
  origin: string;
  records: number;
  imports: number;
  /** One sentence per thing that does not match; empty when everything verifies. */
  problems: string[];
}

const DOCUMENT_BYTES = 50_000_000;

async function json(fetch: Fetcher, url: string): Promise<unknown> {
  const { body } = await fetch(url, DOCUMENT_BYTES);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new FederationError('INVALID_DOCUMENT', `${url} is not JSON`);
  }
}

export async function verifyDeployment(url: string, fetch: Fetcher, options: { expectKey?: string } = {}): Promise<VerifyReport> {
  const base = new URL(url);
  const nodeUrl = new URL('/.well-known/polyphony-node.json', base).href;
  const node = NodeDocumentSchema.parse(await json(fetch, nodeUrl));
  const problems: string[] = [];
  // The key id learnt out of band: a node presenting another key is not the one expected, whatever it signs.
  if (options.expectKey !== undefined && node.public_key.key_id !== options.expectKey) {
    problems.push(`${nodeUrl}: presents key ${node.public_key.key_id}, not the expected ${options.expectKey}`);
  }
  if (node.protocol !== FEDERATION_PROTOCOL) problems.push(`${nodeUrl}: protocol ${node.protocol}, expected ${FEDERATION_PROTOCOL}`);
  if (keyIdOf(Buffer.from(node.public_key.raw, 'base64url')) !== node.public_key.key_id) problems.push(`${nodeUrl}: key_id is not the hash of the public key`);
  const manifestUrl = new URL(node.manifest_url, base).href;
  const rawManifest = await json(fetch, manifestUrl);
  const manifest = FederationManifestSchema.parse(rawManifest);
  const signature = ManifestSignatureSchema.parse(await json(fetch, new URL(node.signature_url, base).href));
  if (!verifyManifestSignature(node.public_key.raw, rawManifest, signature))
    problems.push(`${manifestUrl}: the signature does not verify with key ${node.public_key.key_id}`);
  if (manifest.node_id !== node.node_id) problems.push(`${manifestUrl}: node_id ${manifest.node_id}, the node document says ${node.node_id}`);

  for (const entry of manifest.records) {
    const twinUrl = new URL(entry.url, base).href;
    let body: Buffer;
    try {
      body = (await fetch(twinUrl, entry.bytes + 1)).body;
    } catch (error) {
      problems.push(`${entry.id}: ${(error as Error).message}`);
      continue;
    }
    const sha256 = sha256Hex(body);
    if (body.length !== entry.bytes || sha256 !== entry.sha256)
      problems.push(
        `${entry.id}: ${twinUrl} is ${body.length} bytes with sha256 ${sha256}; the manifest lists ${entry.bytes} bytes with sha256 ${entry.sha256}`,
      );
    if (!verifyRecordSignature(node.public_key.raw, node.node_id, entry.id, entry.sha256, entry.signature))
      problems.push(`${entry.id}: the record signature does not verify`);
  }

  for (const entry of manifest.imports) {
    const record = (await json(fetch, new URL(`/records/${entry.id}.json`, base).href)) as { provenance?: { federation?: unknown } };
    const provenance = FederationProvenanceSchema.safeParse(record.provenance?.federation);
    if (!provenance.success) {
      problems.push(`${entry.id}: listed as an import but its record carries no federation provenance`);
      continue;
    }
    const origin = provenance.data;
    const copyUrl = new URL(entry.url, base).href;
    let body: Buffer;
    try {
      body = (await fetch(copyUrl, DOCUMENT_BYTES)).body;
    } catch (error) {
      problems.push(`${entry.id}: ${(error as Error).message}`);
      continue;
    }
    const sha256 = sha256Hex(body);
    if (sha256 !== origin.content_hash || sha256 !== entry.sha256)
      problems.push(`${entry.id}: the origin copy ${copyUrl} has sha256 ${sha256}; the provenance says ${origin.content_hash}`);
    if (origin.key_id !== keyIdOf(Buffer.from(origin.public_key, 'base64url')))
      problems.push(`${entry.id}: the provenance key_id is not the hash of its public key`);
    if (!verifyRecordSignature(origin.public_key, origin.origin_node, origin.original_id, origin.content_hash, origin.signature)) {
      problems.push(`${entry.id}: the origin signature (${origin.origin_node}) does not verify`);
    }
  }
  return { origin: node.origin, records: manifest.records.length, imports: manifest.imports.length, problems };
}
