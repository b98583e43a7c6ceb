/**
 * Push (optional, off by default): POST /api/federation/offer accepts records only from a peer
 * this deployment has pulled from, signed with the key pinned for it; each refusal stages nothing.
 */
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../core/canonical-json.ts';
import { sha256Hex } from '../core/manifest.ts';
import { keyFromSeed } from '../api/federation/keys.ts';
import { signRecord } from '../api/federation/protocol.ts';
import { createApp } from '../api/app.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import type { Store } from '../storage/store.ts';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildApp, type BuiltApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

const peerKey = keyFromSeed('22'.repeat(32));
const otherKey = keyFromSeed('33'.repeat(32));
const origin = 'http://a.test';
const markdown = readFileSync(path.join(writeFixtureContent({ prefix: 'AAA' }), 'divergences', 'AAA-D1.md'), 'utf8');
const now = new Date('2026-03-01T12:00:00.000Z');
/** Every refused offer names the node document as its next call (spec §7). */
const NODE_DOCUMENT = { method: 'GET', path: '/.well-known/polyphony-node.json' };

function offer(options: { key?: typeof peerKey; markdown?: string; signedAt?: Date; id?: string } = {}) {
  const key = options.key ?? peerKey;
  const id = options.id ?? 'AAA-D1';
  const sha256 = sha256Hex(options.markdown ?? markdown);
  const payload = {
    protocol: 'polyphony-federation/1',
    node_id: peerKey.nodeId,
    origin,
    name: 'Alder Atlas',
    licence: 'CC BY-SA 4.0',
    attribution: 'Alder Atlas contributors',
    signed_at: (options.signedAt ?? now).toISOString(),
    records: [{ id, sha256, signature: signRecord(key, id, sha256), markdown: options.markdown ?? markdown }],
  };
  return { offer: payload, signature: key.sign(canonicalJson(payload)) };
}

describe('POST /api/federation/offer', () => {
  let built: BuiltApp;
  let store: Store;
  let app: ReturnType<typeof createApp>;
  beforeAll(async () => {
    built = await buildApp(writeFixtureContent({ prefix: 'BBB' }));
    store = createSqliteStore(':memory:');
    app = createApp({ corpus: built.corpus, store, log: () => {}, now: () => now, federation: { push: true, offerLimit: { limit: 10, windowMs: 3_600_000 } } });
  }, 120_000);

  it('is off by default, and the node document says whether it is on', async () => {
    expect((await request(built.app).get('/.well-known/polyphony-node.json')).body.offers).toEqual(['pull']);
    expect((await request(app).get('/.well-known/polyphony-node.json')).body.offers).toEqual(['pull', 'push']);
    const response = await request(built.app).post('/api/federation/offer').send(offer());
    expect(response.status).toBe(403);
    expect(response.body.error).toMatchObject({ code: 'PUSH_DISABLED', retryable: false, suggested_next_call: NODE_DOCUMENT });
    expect((await request(built.app).get(NODE_DOCUMENT.path)).status).toBe(200);
  });

  it('with push off, a body of the wrong shape still answers 400 INVALID_BODY (the shape is checked first)', async () => {
    const { offer: payload, signature } = offer();
    for (const body of [[], { signature }, { offer: payload }, { offer: payload, signature: 42 }, { offer: payload, signature, extra: true }]) {
      const response = await request(built.app).post('/api/federation/offer').send(body);
      expect(response.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_BODY', retryable: false, suggested_next_call: NODE_DOCUMENT });
    }
    const unreadable = await request(built.app).post('/api/federation/offer').set('Content-Type', 'text/plain').send(JSON.stringify(offer()));
    expect(unreadable.status).toBe(400);
    expect(unreadable.body.error.suggested_next_call).toEqual(expect.any(Object));
  });

  it('refuses peers never pulled from, forged signatures, altered records and stale offers, staging nothing', async () => {
    const unknown = await request(app).post('/api/federation/offer').send(offer());
    expect(unknown.status).toBe(403);
    expect(unknown.body.error).toMatchObject({ code: 'OFFER_UNAUTHENTICATED', suggested_next_call: NODE_DOCUMENT });
    expect((await request(app).get(NODE_DOCUMENT.path)).status).toBe(200);
    // the curator pulled from the peer once: its key is pinned
    await store.stageImports({ origin, node_id: peerKey.nodeId, public_key: peerKey.publicKey, last_signed_at: '2026-03-01T11:50:00.000Z' }, []);
    const forged = await request(app)
      .post('/api/federation/offer')
      .send(offer({ key: otherKey }));
    expect(forged.status).toBe(403);
    expect(forged.body.error).toMatchObject({ code: 'OFFER_UNAUTHENTICATED', details: { reason: 'BAD_SIGNATURE' } });
    const signed = offer();
    const altered = {
      ...signed,
      offer: { ...signed.offer, records: [{ ...signed.offer.records[0]!, markdown: markdown.replace('installed, not owned', 'owned') }] },
    };
    expect((await request(app).post('/api/federation/offer').send(altered)).body.error.code).toBe('OFFER_UNAUTHENTICATED');
    // altered before the peer signed the offer: the record hash no longer matches
    const resigned = { offer: altered.offer, signature: peerKey.sign(canonicalJson(altered.offer)) };
    const alteredRecord = await request(app).post('/api/federation/offer').send(resigned);
    expect(alteredRecord.status).toBe(422);
    expect(alteredRecord.body.error).toMatchObject({ code: 'OFFER_REFUSED', details: { reason: 'ALTERED_RECORD' }, suggested_next_call: NODE_DOCUMENT });
    const stale = await request(app)
      .post('/api/federation/offer')
      .send(offer({ signedAt: new Date(now.getTime() - 6 * 60_000) }));
    expect(stale.status).toBe(422);
    expect(stale.body.error).toMatchObject({ code: 'OFFER_REFUSED', details: { reason: 'EXPIRED_MANIFEST' } });
    const ours = await request(app)
      .post('/api/federation/offer')
      .send(offer({ id: 'BBB-D1' }));
    expect(ours.status).toBe(422);
    expect(ours.body.error.details.reason).toBe('INVALID_RECORD');
    expect((await request(app).post('/api/federation/offer').send({ offer: {} })).body.error.code).toBe('INVALID_BODY');
    const surrogate = await request(app)
      .post('/api/federation/offer')
      .send(offer({ markdown: `${markdown}\ud800` }));
    // text no store keeps alike is refused at the edge, before the offer is read (ADR 0009)
    expect(surrogate.status).toBe(400);
    expect(surrogate.body.error).toMatchObject({ code: 'INVALID_TEXT', details: { problem: 'lone_surrogate' } });
    expect(await store.listImports()).toEqual([]);
  });

  it('stages a valid offer as pending imports once, without moving the pull clock, and limits offers per client', async () => {
    const accepted = await request(app).post('/api/federation/offer').send(offer());
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ staged: ['AAA-D1'], unchanged: 0 });
    const [item] = await store.listImports('pending');
    expect(item).toMatchObject({
      record_id: 'AAA-D1',
      markdown,
      origin,
      provenance: { origin_name: 'Alder Atlas', key_id: peerKey.keyId, content_hash: sha256Hex(markdown) },
    });
    expect((await request(app).post('/api/federation/offer').send(offer())).body).toEqual({ staged: [], unchanged: 1 });
    expect((await store.getPeer(origin))!.last_signed_at).toBe('2026-03-01T11:50:00.000Z');
    // ten offers an hour per client: the refusals of the test above counted too (the edge's 400 did not)
    let limited = await request(app).post('/api/federation/offer').send(offer());
    if (limited.status === 202) limited = await request(app).post('/api/federation/offer').send(offer());
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
  });
});
