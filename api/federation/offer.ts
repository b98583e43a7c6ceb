/**
 * Push (docs/FEDERATION.md, off by default): a peer this deployment has already pulled from
 * offers records, signed with the key pinned for its origin. The offer is verified as a pull
 * is — signature, freshness, every hash and record signature, every record valid — and lands
 * as pending imports; nothing is published without a curator.
 */
import { randomBytes } from 'node:crypto';
import { canonicalJson } from '../../core/canonical-json.ts';
import { sha256Hex } from '../../core/manifest.ts';
import { FEDERATION_PROTOCOL, type FederationOffer, type FederationProvenance } from '../../schemas/federation.ts';
import type { FederationStore, NewImport } from '../../storage/federation.ts';
import { FederationError } from './errors.ts';
import { keyIdOf, verifySignature } from './keys.ts';
import { verifyRecordSignature } from './protocol.ts';
import { checkRecord } from './pull.ts';

export const OFFER_FRESHNESS_MS = 5 * 60_000;

export async function receiveOffer(
  body: FederationOffer,
  rawOffer: unknown,
  options: { store: FederationStore; localPrefix: string; now: Date },
): Promise<{ staged: string[]; unchanged: number }> {
  const { offer } = body;
  if (offer.protocol !== FEDERATION_PROTOCOL)
    throw new FederationError('PROTOCOL_MISMATCH', `the offer speaks ${JSON.stringify(offer.protocol)}; this deployment speaks ${FEDERATION_PROTOCOL}`);
  const peer = await options.store.getPeer(offer.origin);
  if (!peer || peer.node_id !== offer.node_id) {
    throw new FederationError(
      'KEY_CHANGED',
      `${offer.origin} (${offer.node_id}) is not a peer this deployment has pulled from; offers are accepted only from pinned peers`,
    );
  }
  if (!verifySignature(peer.public_key, canonicalJson(rawOffer), body.signature)) {
    throw new FederationError('BAD_SIGNATURE', `the offer's signature does not verify with the key pinned for ${offer.origin}`);
  }
  if (Math.abs(new Date(offer.signed_at).getTime() - options.now.getTime()) > OFFER_FRESHNESS_MS) {
    throw new FederationError('EXPIRED_MANIFEST', `the offer was signed at ${offer.signed_at}, more than 5 minutes from now: sign a fresh one`);
  }
  const known = await options.store.knownImports(peer.node_id);
  const imports: NewImport[] = [];
  const at = options.now.toISOString();
  const seen = new Set<string>();
  for (const record of offer.records) {
    if (seen.has(record.id)) throw new FederationError('INVALID_RECORD', `the offer carries ${record.id} twice`);
    seen.add(record.id);
    // NUL and lone surrogates would not survive both store drivers byte for byte.
    if (record.markdown.includes('\u0000') || Buffer.from(record.markdown, 'utf8').toString('utf8') !== record.markdown) {
      throw new FederationError('INVALID_RECORD', `${record.id} is not clean UTF-8 text (NUL or a lone surrogate)`);
    }
    const sha256 = sha256Hex(Buffer.from(record.markdown, 'utf8'));
    if (sha256 !== record.sha256) throw new FederationError('ALTERED_RECORD', `${record.id} has sha256 ${sha256}, the offer lists ${record.sha256}`);
    if (!verifyRecordSignature(peer.public_key, peer.node_id, record.id, record.sha256, record.signature)) {
      throw new FederationError('BAD_SIGNATURE', `the record signature of ${record.id} does not verify with the key pinned for ${offer.origin}`);
    }
    const prefix = record.id.replace(/-[DL]\d+$/, '');
    if (prefix === options.localPrefix || !/^[A-Z][A-Z0-9]{1,11}-[DL]\d+$/.test(record.id)) {
      throw new FederationError('INVALID_RECORD', `${record.id} is not an Atlas record id of another prefix than ours (${options.localPrefix})`);
    }
    checkRecord(record.id, record.markdown, prefix);
    if (known.get(record.id)?.has(sha256)) continue;
    const provenance: FederationProvenance = {
      origin: offer.origin,
      origin_node: peer.node_id,
      origin_name: offer.name,
      origin_prefix: prefix,
      original_id: record.id,
      original_url: new URL(`/records/${record.id}.md`, offer.origin).href,
      content_hash: sha256,
      key_id: keyIdOf(Buffer.from(peer.public_key, 'base64url')),
      public_key: peer.public_key,
      signature: record.signature,
      licence: offer.licence,
      attribution: offer.attribution,
      pulled_at: at,
    };
    imports.push({
      id: `imp_${randomBytes(8).toString('hex')}`,
      origin_node: peer.node_id,
      origin: offer.origin,
      record_id: record.id,
      content_hash: sha256,
      markdown: record.markdown,
      provenance,
      staged_at: at,
    });
  }
  // An offer does not move the peer's manifest clock: that belongs to pulls.
  const outcome = await options.store.stageImports(peer, imports);
  if (!outcome.accepted)
    throw new FederationError('KEY_CHANGED', `the state pinned for ${offer.origin} changed meanwhile (a pull, or a new key); resend the offer`);
  return { staged: outcome.staged.map((item) => item.record_id), unchanged: offer.records.length - outcome.staged.length };
}
