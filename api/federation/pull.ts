/**
 * Pull (docs/FEDERATION.md): read a peer's node document and signed manifest, verify them,
 * fetch the records whose hashes are new, verify each, and stage them as pending imports —
 * all or nothing. Nothing staged is served, retrieved or prompted until a curator approves it.
 */
import { randomBytes } from 'node:crypto';
import { createDivergenceSchema } from '../../schemas/content.ts';
import {
  FEDERATION_PROTOCOL,
  FederationManifestSchema,
  KeyRotationsDocumentSchema,
  ManifestSignatureSchema,
  NodeDocumentSchema,
  type FederationManifest,
  type FederationProvenance,
  type ManifestRecord,
  type NodeDocument,
} from '../../schemas/federation.ts';
import { parseMarkdown } from '../../content-files/frontmatter.ts';
import { sha256Hex } from '../../core/manifest.ts';
import { pinMatches, type FederationPeer, type FederationStore, type NewImport } from '../../storage/federation.ts';
import { FederationError } from './errors.ts';
import { parseHttpUrl, type Fetcher } from './fetch.ts';
import { keyIdOf, nodeIdOf } from './keys.ts';
import { verifyManifestSignature, verifyRecordSignature } from './protocol.ts';
import { followRotations, KEY_ROTATIONS_PATH, type RotationPath } from './rotation.ts';

export interface PullLimits {
  /** FEDERATION_MAX_RECORDS: most manifest entries a pull accepts. */
  maxRecords: number;
  /** FEDERATION_MAX_BYTES: most bytes a pull fetches, documents and records together. */
  maxBytes: number;
}

export interface PullOptions extends PullLimits {
  store: FederationStore;
  fetch: Fetcher;
  /** This deployment's id prefix: a peer using it would collide with our own records. */
  localPrefix: string;
  /** Verify and report, stage nothing. */
  plan?: boolean;
  now: () => Date;
}

export interface PullReport {
  origin: string;
  node_id: string;
  name: string;
  signed_at: string;
  /** The revision the manifest listed changes since (the one last accepted from this peer), or null when it listed every record. */
  since: string | null;
  /** The peer's corpus revision, recorded for the next pull's since. */
  corpus_rev: string;
  listed: number;
  unchanged: number;
  bytes_fetched: number;
  /** Staged (or, with plan, that would be staged): original id, sha256, import id. */
  staged: { record_id: string; sha256: string; import_id: string | null }[];
  plan: boolean;
  /** Present when the origin's key changed since the pin and its rotation statements carried the pin to the new key. */
  rotated?: { from: string; to: string; steps: number };
}

/**
 * The origin's key against the one pinned for it. Pinned by key id only (federate trust): the
 * node must present that key. Pinned by a pull: the same key, or a chain of rotation statements
 * from the pinned key to the presented one, each signed by the key it retires.
 */
async function checkPin(
  pinned: FederationPeer,
  node: NodeDocument,
  origin: string,
  fetchCounted: (href: string, cap: number) => Promise<{ body: Buffer }>,
): Promise<{ from: string; keys: string[] } | undefined> {
  if (pinMatches(pinned, { node_id: node.node_id, public_key: node.public_key.raw })) return undefined;
  const pinnedKeyId = pinned.node_id.replace(/^pn1:/, '');
  if (pinned.public_key === '') {
    throw new FederationError(
      'PINNED_KEY_MISMATCH',
      `${origin} presents key ${node.public_key.key_id}, but the operator pinned ${pinnedKeyId} for it (npm run federate -- trust) before any pull; nothing was staged. Check the key id with the origin's operator out of band.`,
    );
  }
  const rotationsUrl = new URL(KEY_ROTATIONS_PATH, origin).href;
  let found: RotationPath;
  try {
    const document = parseJson((await fetchCounted(rotationsUrl, DOCUMENT_BYTES)).body, rotationsUrl, KeyRotationsDocumentSchema).data;
    found = followRotations(document, origin, pinned.public_key, node.public_key.raw);
  } catch (error) {
    if (!(error instanceof FederationError) || error.code === 'LIMIT_EXCEEDED') throw error;
    found = { ok: false, reason: `it publishes no readable rotation statements at ${rotationsUrl} (${error.message})` };
  }
  if (!found.ok) {
    throw new FederationError(
      'KEY_CHANGED',
      `${origin} now presents key ${node.public_key.key_id}, not the key ${pinnedKeyId} pinned for it, and ${found.reason}: a key change without a rotation statement signed by the pinned key is refused; nothing was staged. If its operator replaced the key, they publish the statement with npm run federate -- rotate-key.`,
    );
  }
  return { from: pinnedKeyId, keys: found.keys };
}

const DOCUMENT_BYTES = 1_000_000;

function parseJson<T>(
  body: Buffer,
  what: string,
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } },
): { raw: unknown; data: T } {
  let raw: unknown;
  try {
    raw = JSON.parse(body.toString('utf8'));
  } catch {
    throw new FederationError('INVALID_DOCUMENT', `${what} is not JSON`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new FederationError('INVALID_DOCUMENT', `${what}: ${issue.path.join('.') || '(document)'} ${issue.message}`);
  }
  return { raw, data: parsed.data };
}

export async function pullFromPeer(url: string, options: PullOptions): Promise<PullReport> {
  const base = parseHttpUrl(url);
  let budget = options.maxBytes;
  const fetchCounted = async (href: string, cap: number) => {
    const fetched = await options.fetch(href, Math.min(cap, budget));
    budget -= fetched.body.length;
    return fetched;
  };

  // 1. The node document.
  const nodeUrl = new URL('/.well-known/polyphony-node.json', base).href;
  const node = parseJson<NodeDocument>((await fetchCounted(nodeUrl, DOCUMENT_BYTES)).body, nodeUrl, NodeDocumentSchema).data;
  checkNodeDocument(node, nodeUrl, base, options.localPrefix);
  const pinned = await options.store.getPeer(base.origin);
  const rotation = pinned ? await checkPin(pinned, node, base.origin, fetchCounted) : undefined;

  // 2. The manifest and its signature; after a first pull, only what changed since the revision then accepted.
  const manifestUrl = new URL(node.manifest_url, base);
  const signatureUrl = new URL(node.signature_url, base);
  for (const documentUrl of [manifestUrl, signatureUrl]) {
    if (documentUrl.origin !== base.origin) throw new FederationError('ORIGIN_MISMATCH', `${nodeUrl} points to ${documentUrl.href}, outside its origin`);
  }
  const since = pinned?.last_corpus_rev || undefined;
  if (since) for (const documentUrl of [manifestUrl, signatureUrl]) documentUrl.searchParams.set('since', since);
  const manifestDocument = parseJson<FederationManifest>(
    (await fetchCounted(manifestUrl.href, options.maxBytes)).body,
    manifestUrl.href,
    FederationManifestSchema,
  );
  const signature = parseJson((await fetchCounted(signatureUrl.href, DOCUMENT_BYTES)).body, signatureUrl.href, ManifestSignatureSchema).data;
  if (signature.key_id !== node.public_key.key_id || !verifyManifestSignature(node.public_key.raw, manifestDocument.raw, signature)) {
    throw new FederationError(
      'BAD_SIGNATURE',
      `the signature of ${manifestUrl.href} does not verify with the key ${node.public_key.key_id} of ${nodeUrl}; nothing was staged`,
    );
  }
  const manifest = manifestDocument.data;
  // A peer that does not know the revision (or an older engine) answers the whole manifest, without since.
  if (manifest.since !== undefined && manifest.since !== since) {
    throw new FederationError(
      'INVALID_DOCUMENT',
      `${manifestUrl.href} lists the records changed since ${manifest.since}, but this pull asked ${since ? `since ${since}` : 'for every record'}; nothing was staged`,
    );
  }
  const now = options.now();
  const signedAt = checkManifest(manifest, node, { now, pinned, origin: base.origin, maxRecords: options.maxRecords });

  // 3. Only records whose hashes are new, each verified before anything is staged.
  // Records first pulled under a key this one replaced are known too (a rotation changes the node id, not the records).
  const known = await options.store.knownImports(node.node_id);
  for (const earlier of rotation?.keys.slice(0, -1) ?? []) {
    for (const [id, hashes] of await options.store.knownImports(nodeIdOf(keyIdOf(Buffer.from(earlier, 'base64url'))))) {
      for (const hash of hashes) known.set(id, (known.get(id) ?? new Set()).add(hash));
    }
  }
  const wanted = manifest.records.filter((entry) => !known.get(entry.id)?.has(entry.sha256));
  const wantedBytes = wanted.reduce((sum, entry) => sum + entry.bytes, 0);
  if (wantedBytes > budget)
    throw new FederationError('LIMIT_EXCEEDED', `the new records are ${wantedBytes} bytes, more than the ${budget} bytes left under FEDERATION_MAX_BYTES`);
  const pulledAt = now.toISOString();
  const fetched: NewImport[] = [];
  if (!options.plan) {
    let next = 0;
    const worker = async () => {
      while (next < wanted.length) {
        const entry = wanted[next++]!;
        fetched.push(await fetchRecord(entry));
      }
    };
    await Promise.all(Array.from({ length: Math.min(4, wanted.length) }, worker));
  }

  async function fetchRecord(entry: ManifestRecord): Promise<NewImport> {
    const recordUrl = new URL(entry.url, base);
    if (recordUrl.origin !== base.origin) throw new FederationError('INVALID_RECORD', `${entry.id} points to ${recordUrl.href}, outside ${base.origin}`);
    const body = (await fetchCounted(recordUrl.href, entry.bytes)).body;
    const sha256 = sha256Hex(body);
    if (body.length !== entry.bytes || sha256 !== entry.sha256) {
      throw new FederationError(
        'ALTERED_RECORD',
        `${recordUrl.href} is ${body.length} bytes with sha256 ${sha256}; the signed manifest lists ${entry.bytes} bytes with sha256 ${entry.sha256}: altered in transit; nothing was staged`,
      );
    }
    const markdown = body.toString('utf8');
    if (!Buffer.from(markdown, 'utf8').equals(body) || markdown.includes('\u0000'))
      throw new FederationError('INVALID_RECORD', `${entry.id} is not clean UTF-8 text`);
    checkRecord(entry.id, markdown, node.id_prefix);
    const provenance: FederationProvenance = {
      origin: node.origin,
      origin_node: node.node_id,
      origin_name: node.name,
      origin_prefix: node.id_prefix,
      original_id: entry.id,
      original_url: recordUrl.href,
      content_hash: entry.sha256,
      key_id: node.public_key.key_id,
      public_key: node.public_key.raw,
      signature: entry.signature,
      licence: manifest.licence,
      attribution: manifest.attribution,
      pulled_at: pulledAt,
    };
    return {
      id: `imp_${randomBytes(8).toString('hex')}`,
      origin_node: node.node_id,
      origin: node.origin,
      record_id: entry.id,
      content_hash: entry.sha256,
      markdown,
      provenance,
      staged_at: pulledAt,
    };
  }

  const report: PullReport = {
    origin: node.origin,
    node_id: node.node_id,
    name: node.name,
    signed_at: signedAt,
    since: manifest.since ?? null,
    corpus_rev: manifest.corpus_rev,
    listed: manifest.records.length,
    unchanged: manifest.records.length - wanted.length,
    bytes_fetched: options.maxBytes - budget,
    staged: wanted.map((entry) => ({ record_id: entry.id, sha256: entry.sha256, import_id: null })),
    plan: Boolean(options.plan),
    ...(rotation ? { rotated: { from: rotation.from, to: node.public_key.key_id, steps: rotation.keys.length - 1 } } : {}),
  };
  if (options.plan) return report;
  // The pin moves to the new key only now, after everything the new key signed has verified.
  if (rotation && pinned && !(await options.store.rotatePeer(base.origin, pinned, { node_id: node.node_id, public_key: node.public_key.raw }))) {
    throw new FederationError('KEY_CHANGED', `the key pinned for ${base.origin} changed meanwhile (another pull); nothing was staged`);
  }
  const outcome = await options.store.stageImports(
    { origin: node.origin, node_id: node.node_id, public_key: node.public_key.raw, last_signed_at: signedAt, last_corpus_rev: manifest.corpus_rev },
    fetched.sort((a, b) => (a.record_id < b.record_id ? -1 : 1)),
  );
  if (!outcome.accepted)
    throw new FederationError('REPLAYED_MANIFEST', `a newer manifest of ${base.origin}, or another key for it, was accepted meanwhile; nothing was staged`);
  report.staged = outcome.staged.map((item) => ({ record_id: item.record_id, sha256: item.content_hash, import_id: item.id }));
  return report;
}

/** The node document speaks our protocol, for its own origin, under a key its ids derive from, with a prefix not ours. */
function checkNodeDocument(node: NodeDocument, nodeUrl: string, base: URL, localPrefix: string): void {
  if (node.protocol !== FEDERATION_PROTOCOL) {
    throw new FederationError('PROTOCOL_MISMATCH', `${nodeUrl} speaks ${JSON.stringify(node.protocol)}; this deployment speaks ${FEDERATION_PROTOCOL}`);
  }
  if (node.origin !== base.origin) throw new FederationError('ORIGIN_MISMATCH', `${nodeUrl} says its origin is ${node.origin}, not ${base.origin}`);
  const rawKey = Buffer.from(node.public_key.raw, 'base64url');
  if (rawKey.length !== 32 || node.public_key.key_id !== keyIdOf(rawKey) || node.node_id !== nodeIdOf(node.public_key.key_id)) {
    throw new FederationError('INVALID_DOCUMENT', `${nodeUrl}: key_id and node_id must be derived from the public key`);
  }
  if (node.id_prefix === localPrefix) {
    throw new FederationError(
      'INVALID_DOCUMENT',
      `${node.origin} uses the id prefix ${node.id_prefix}, which is this deployment's own: its records would collide with ours`,
    );
  }
}

/**
 * The verified manifest describes the node that signed it, is fresh, no older than the one last
 * accepted from this origin, within the record limit, and lists each record once under the
 * node's prefix with a record signature that verifies. Answers when it was signed.
 */
function checkManifest(
  manifest: FederationManifest,
  node: NodeDocument,
  context: { now: Date; pinned: FederationPeer | undefined; origin: string; maxRecords: number },
): string {
  const { now, pinned, origin, maxRecords } = context;
  if (manifest.protocol !== FEDERATION_PROTOCOL) throw new FederationError('PROTOCOL_MISMATCH', `the manifest speaks ${JSON.stringify(manifest.protocol)}`);
  for (const field of ['node_id', 'origin', 'id_prefix'] as const) {
    if (manifest[field] !== node[field])
      throw new FederationError('ORIGIN_MISMATCH', `the manifest's ${field} is ${manifest[field]}, the node document's ${node[field]}`);
  }
  const signedAt = new Date(manifest.signed_at).toISOString();
  if (new Date(manifest.expires_at).getTime() < now.getTime())
    throw new FederationError('EXPIRED_MANIFEST', `the manifest signed at ${signedAt} expired at ${manifest.expires_at}`);
  if (pinned && signedAt < pinned.last_signed_at) {
    throw new FederationError(
      'REPLAYED_MANIFEST',
      `the manifest was signed at ${signedAt}, before the one already accepted from ${origin} (${pinned.last_signed_at}): an old manifest replayed; nothing was staged`,
    );
  }
  if (manifest.records.length > maxRecords) {
    throw new FederationError('LIMIT_EXCEEDED', `the manifest lists ${manifest.records.length} records, more than FEDERATION_MAX_RECORDS (${maxRecords})`);
  }
  const idPattern = new RegExp(`^${node.id_prefix}-[DL]\\d+$`);
  const seen = new Set<string>();
  for (const entry of manifest.records) {
    if (!idPattern.test(entry.id))
      throw new FederationError('INVALID_RECORD', `the manifest lists ${JSON.stringify(entry.id)}, not an Atlas record id of prefix ${node.id_prefix}`);
    if (seen.has(entry.id)) throw new FederationError('INVALID_RECORD', `the manifest lists ${entry.id} twice`);
    seen.add(entry.id);
    if (!verifyRecordSignature(node.public_key.raw, node.node_id, entry.id, entry.sha256, entry.signature)) {
      throw new FederationError('BAD_SIGNATURE', `the record signature of ${entry.id} does not verify with ${node.public_key.key_id}`);
    }
  }

  return signedAt;
}

/** A pulled record must be a valid Atlas record of its origin, under the id the manifest gives, and not itself an import. */
export function checkRecord(id: string, markdown: string, originPrefix: string): void {
  let data: Record<string, unknown>;
  try {
    data = parseMarkdown(markdown).data;
  } catch (error) {
    throw new FederationError('INVALID_RECORD', `${id}: the frontmatter is not valid YAML (${(error as Error).message})`);
  }
  const parsed = createDivergenceSchema(originPrefix).safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new FederationError('INVALID_RECORD', `${id}: ${issue.path.join('.')} ${issue.message}`);
  }
  if (parsed.data.id !== id) throw new FederationError('INVALID_RECORD', `the twin listed as ${id} is the record ${parsed.data.id}`);
  if ((parsed.data.provenance as { federation?: unknown } | undefined)?.federation) {
    throw new FederationError('INVALID_RECORD', `${id} is itself an import; version 1 does not relay records`);
  }
}
