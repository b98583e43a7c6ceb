/** The federation documents (docs/FEDERATION.md): what a node publishes and a puller parses. */
import { z } from 'zod';

export const FEDERATION_PROTOCOL = 'polyphony-federation/1';

const hex64 = (description: string) =>
  z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex digits')
    .describe(description);
const base64url = (description: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, 'must be base64url')
    .describe(description);
const text = (description: string) => z.string().describe(description);
const isoTime = (description: string) => z.string().datetime({ offset: true }).describe(description);
const prefix = (description: string) =>
  z
    .string()
    .regex(/^[A-Z][A-Z0-9]{1,11}$/)
    .describe(description);

export const NodeDocumentSchema = z
  .object({
    protocol: text(`Federation protocol version; this engine speaks ${FEDERATION_PROTOCOL}.`),
    node_id: z.string().min(1).describe('Node id: pn1:<key_id>.'),
    origin: z.string().url().describe('Origin URL the node signs for.'),
    name: text('Deployment name.'),
    id_prefix: prefix('Id prefix of its records; imports keep it.'),
    counts: z
      .object({
        atlas_records: z.number().int().nonnegative().describe('Atlas records (from the manifest).'),
        works: z.number().int().nonnegative().describe('Corpus works (from the manifest).'),
      })
      .describe('Counts copied from /api/manifest.'),
    licences: z.object({ code: text('Licence of the engine code.'), data: text('Licence of the records.') }).describe('Licences.'),
    attribution: text('Attribution the data licence requires.'),
    offers: z.array(z.string()).describe('What the node offers: pull.'),
    public_key: z
      .object({
        algorithm: z.literal('ed25519').describe('Signature algorithm.'),
        key_id: text('First 32 hex digits of sha256 of the raw public key.'),
        raw: base64url('Raw 32-byte Ed25519 public key, base64url.'),
      })
      .describe('Public key that signs the manifest and each record.'),
    manifest_url: text('Path of the signed manifest.'),
    signature_url: text('Path of the manifest signature.'),
    key_rotations_url: text('Path of the key rotation statements (present when the node has rotated its key).').optional(),
  })
  .describe('Federation node document (docs/FEDERATION.md).');
export type NodeDocument = z.infer<typeof NodeDocumentSchema>;

export const ManifestRecordSchema = z.object({
  id: z.string().min(1).max(64).describe('Record id.'),
  sha256: hex64('sha256 of the record twin /records/<id>.md as served.'),
  bytes: z.number().int().nonnegative().describe('Length of the record twin in bytes.'),
  url: text('Path of the record twin.'),
  signature: base64url('Ed25519 signature of the record statement {protocol, node_id, id, sha256} (canonical JSON).'),
});
export type ManifestRecord = z.infer<typeof ManifestRecordSchema>;

export const ManifestImportSchema = z.object({
  id: text('Id of an imported record (its origin id).'),
  origin: text('Origin URL it was imported from.'),
  origin_node: text('Origin node id.'),
  sha256: hex64('sha256 of the origin bytes, as the origin signed them.'),
  url: text('Path of the origin bytes: /records/<id>.origin.md.'),
});

export const FederationManifestSchema = z
  .object({
    protocol: text('Federation protocol version.'),
    node_id: text('Node id of the signer.'),
    origin: text('Origin URL.'),
    id_prefix: text('Id prefix of the records.'),
    key_id: text('Key id of the signing key.'),
    signed_at: isoTime('Start of the signing window; a puller refuses one older than the last it accepted.'),
    expires_at: isoTime('After this the manifest is refused.'),
    corpus_rev: text('Content revision (as /api/manifest).'),
    since: z
      .string()
      // CORPUS_REV_PATTERN of schemas/api/changes.ts, written out: importing it here closes an import cycle through schemas/api/common.ts.
      .regex(/^[0-9a-f]{16}$/)
      .optional()
      .describe(
        'Present only when the manifest answers ?since=<corpus_rev> and the node holds that revision in its history: records then lists only the records added or changed since it (removed ones are not listed). Absent: records lists every record.',
      ),
    counts_hash: text('hashes.manifest of /api/manifest.'),
    licence: text('Licence of the records.'),
    attribution: text('Attribution the licence requires.'),
    records: z
      .array(ManifestRecordSchema)
      .describe("Every Atlas record built from this deployment's own content; with since, only those added or changed since that revision."),
    imports: z.array(ManifestImportSchema).describe('Records imported from other deployments; never re-offered as its own.'),
  })
  .describe('Signed federation manifest: every record twin hash and record signature.');
export type FederationManifest = z.infer<typeof FederationManifestSchema>;

export const ManifestSignatureSchema = z
  .object({
    algorithm: z.literal('ed25519').describe('Signature algorithm.'),
    key_id: text('Key id of the signing key.'),
    manifest_sha256: hex64('sha256 of the canonical JSON of the manifest.'),
    signature: base64url('Ed25519 signature over the canonical JSON of the manifest, base64url.'),
  })
  .describe('Signature of the federation manifest.');
export type ManifestSignature = z.infer<typeof ManifestSignatureSchema>;

export const MAX_OFFER_RECORDS = 50;

/** POST /api/federation/offer (push, off by default): records a known peer offers, signed. */
export const FederationOfferSchema = z
  .strictObject({
    offer: z
      .strictObject({
        protocol: text('Federation protocol version.'),
        node_id: text('Node id of the offering peer; must be the one pinned for its origin.'),
        origin: z.string().url().describe('Origin of the offering peer; this deployment must have pulled from it before.'),
        name: text('Name of the offering deployment.'),
        licence: text('Licence of the offered records.'),
        attribution: text('Attribution the licence requires.'),
        signed_at: isoTime('When the offer was signed; refused more than 5 minutes away from now.'),
        records: z
          .array(
            z
              .strictObject({
                id: z.string().min(1).max(64).describe('Record id at the origin.'),
                sha256: hex64('sha256 of markdown (UTF-8).'),
                signature: base64url('Record signature of {protocol, node_id, id, sha256}, as in the manifest.'),
                markdown: z.string().describe('The record twin, verbatim.'),
              })
              .describe('One offered record.'),
          )
          .min(1)
          .max(MAX_OFFER_RECORDS)
          .describe(`At most ${MAX_OFFER_RECORDS} records (and 64 KB) an offer.`),
      })
      .describe('The signed payload.'),
    signature: base64url('Ed25519 signature over the canonical JSON of offer, by the key pinned for its origin.'),
  })
  .describe('A signed offer of records from a peer.');
export type FederationOffer = z.infer<typeof FederationOfferSchema>;

export const OfferAcceptedSchema = z
  .object({
    staged: z.array(z.string()).describe('Record ids staged as pending imports (a curator approves them).'),
    unchanged: z.number().int().nonnegative().describe('Offered records already known by their hash.'),
  })
  .describe('Offer accepted: records staged as pending imports.');

/** The provenance an approved import carries in its frontmatter (`provenance.federation`). */
export const FederationProvenanceSchema = z.object({
  origin: z.string().url(),
  origin_node: z.string().min(1),
  origin_name: z.string(),
  origin_prefix: z.string().regex(/^[A-Z][A-Z0-9]{1,11}$/),
  original_id: z.string().min(1),
  original_url: z.string().url(),
  content_hash: z.string().regex(/^[0-9a-f]{64}$/),
  key_id: z.string(),
  public_key: z.string().regex(/^[A-Za-z0-9_-]+$/),
  signature: z.string().regex(/^[A-Za-z0-9_-]+$/),
  licence: z.string(),
  attribution: z.string(),
  pulled_at: z.string(),
  approved_at: z.string().optional(),
  approved_by: z.string().optional(),
});
export type FederationProvenance = z.infer<typeof FederationProvenanceSchema>;

const publicKeyRef = (description: string) =>
  z
    .strictObject({
      key_id: z
        .string()
        .regex(/^[0-9a-f]{32}$/)
        .describe('First 32 hex digits of sha256 of the raw public key.'),
      raw: base64url('Raw 32-byte Ed25519 public key, base64url.'),
    })
    .describe(description);

/** What a node says when it replaces its key: signed by the key it retires (and by the new one). */
export const KeyRotationStatementSchema = z
  .strictObject({
    protocol: text(`Federation protocol version (${FEDERATION_PROTOCOL}).`),
    type: z.literal('key-rotation').describe('Statement type.'),
    origin: z.string().url().describe('Origin of the node whose key changes.'),
    previous: publicKeyRef('The key retired.'),
    next: publicKeyRef('The key that replaces it.'),
    rotated_at: isoTime('When the key was replaced.'),
  })
  .describe('Key rotation statement (docs/FEDERATION.md).');
export type KeyRotationStatement = z.infer<typeof KeyRotationStatementSchema>;

export const SignedKeyRotationSchema = z
  .strictObject({
    statement: KeyRotationStatementSchema,
    signature: base64url('Ed25519 signature of the canonical JSON of the statement by the previous key.'),
    next_signature: base64url('The same, by the next key (the node holds it).'),
  })
  .describe('A rotation statement and its two signatures.');
export type SignedKeyRotation = z.infer<typeof SignedKeyRotationSchema>;

export const KeyRotationsDocumentSchema = z
  .strictObject({
    protocol: text(`Federation protocol version (${FEDERATION_PROTOCOL}).`),
    rotations: z.array(SignedKeyRotationSchema).describe('Every rotation of this node, oldest first: a chain from its first key to its current one.'),
  })
  .describe('Key rotation statements of a node: GET /.well-known/polyphony-key-rotations.json (docs/FEDERATION.md).');
export type KeyRotationsDocument = z.infer<typeof KeyRotationsDocumentSchema>;
