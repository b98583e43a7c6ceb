/** The federation documents (docs/FEDERATION.md): what a node publishes and a puller parses. */
import { z } from 'zod';

export const FEDERATION_PROTOCOL = 'polyphony-federation/1';

const hex64 = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex digits');
const base64url = z.string().regex(/^[A-Za-z0-9_-]+$/, 'must be base64url');
const isoTime = z.string().datetime({ offset: true });

export const NodeDocumentSchema = z.object({
  protocol: z.string(),
  node_id: z.string().min(1),
  origin: z.string().url(),
  name: z.string(),
  id_prefix: z.string().regex(/^[A-Z][A-Z0-9]{1,11}$/),
  counts: z.object({ atlas_records: z.number().int().nonnegative(), works: z.number().int().nonnegative() }),
  licences: z.object({ code: z.string(), data: z.string() }),
  attribution: z.string(),
  offers: z.array(z.string()),
  public_key: z.object({ algorithm: z.literal('ed25519'), key_id: z.string(), raw: base64url }),
  manifest_url: z.string(),
  signature_url: z.string(),
});
export type NodeDocument = z.infer<typeof NodeDocumentSchema>;

export const ManifestRecordSchema = z.object({
  id: z.string().min(1).max(64),
  sha256: hex64,
  bytes: z.number().int().nonnegative(),
  url: z.string(),
  signature: base64url,
});
export type ManifestRecord = z.infer<typeof ManifestRecordSchema>;

export const ManifestImportSchema = z.object({
  id: z.string(),
  origin: z.string(),
  origin_node: z.string(),
  sha256: hex64,
  url: z.string(),
});

export const FederationManifestSchema = z.object({
  protocol: z.string(),
  node_id: z.string(),
  origin: z.string(),
  id_prefix: z.string(),
  key_id: z.string(),
  signed_at: isoTime,
  expires_at: isoTime,
  corpus_rev: z.string(),
  counts_hash: z.string(),
  licence: z.string(),
  attribution: z.string(),
  records: z.array(ManifestRecordSchema),
  imports: z.array(ManifestImportSchema),
});
export type FederationManifest = z.infer<typeof FederationManifestSchema>;

export const ManifestSignatureSchema = z.object({
  algorithm: z.literal('ed25519'),
  key_id: z.string(),
  manifest_sha256: hex64,
  signature: base64url,
});
export type ManifestSignature = z.infer<typeof ManifestSignatureSchema>;

/** The provenance an approved import carries in its frontmatter (`provenance.federation`). */
export const FederationProvenanceSchema = z.object({
  origin: z.string().url(),
  origin_node: z.string().min(1),
  origin_name: z.string(),
  origin_prefix: z.string().regex(/^[A-Z][A-Z0-9]{1,11}$/),
  original_id: z.string().min(1),
  original_url: z.string().url(),
  content_hash: hex64,
  key_id: z.string(),
  public_key: base64url,
  signature: base64url,
  licence: z.string(),
  attribution: z.string(),
  pulled_at: z.string(),
  approved_at: z.string().optional(),
  approved_by: z.string().optional(),
});
export type FederationProvenance = z.infer<typeof FederationProvenanceSchema>;
