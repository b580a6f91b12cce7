import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { mediaRootOf } from '../../platform/media/media-root.js';
import { mediaUris, testEdge, variantUris, type TestEdge } from './testing/edge-test-kit.js';
import { writeFakeAsset } from './testing/media-fixtures.js';

/** Headers a HEAD must answer like its GET (the rest differ per answer: request id, date). */
const COMPARED = ['content-type', 'cache-control', 'access-control-allow-origin', 'access-control-expose-headers', 'x-playback-error-code', 'accept-ranges'];
const picked = (headers: Record<string, unknown>) => Object.fromEntries(COMPARED.map((h) => [h, headers[h]]));

describe('HEAD on playback URLs: the GET answer without a body, and no playback', () => {
  let t: TestApp;
  let edge: TestEdge;
  before(async () => {
    edge = testEdge();
    t = await createTestApp({ overrides: { playbackEdge: edge.overrides } });
    for (const id of ['head-1', 'head-2', 'head-3']) await writeFakeAsset(mediaRootOf(t.runtime.config), t.workspace.id, id);
  });
  after(() => t.close());

  test('a signed playback URL: 200 with the GET headers and a Content-Length, no body, no request event', async () => {
    const url = t.client.playback.url('head-1');
    const head = await t.app.inject({ method: 'HEAD', url });
    assert.equal(head.statusCode, 200, head.body);
    assert.equal(head.body, '');
    assert.ok(Number(head.headers['content-length']) > 0, 'the playlist\'s length');
    assert.equal(edge.events.length, 0, 'HEAD emits nothing');
    const get = await t.app.inject({ method: 'GET', url });
    assert.equal(get.statusCode, 200);
    assert.deepEqual(picked(head.headers), picked(get.headers));
    // Same length: the playlist differs only in its session token, of the same size for the same URL.
    assert.equal(head.headers['content-length'], get.headers['content-length']);
    assert.deepEqual(edge.events.map((e) => e.type), ['request'], 'only the GET is a playback request');
  });

  test('the event path answers HEAD too (404 999 while the slicer has written nothing, like GET), with no event', async () => {
    const url = t.client.playback.url('no-live-output', { kind: 'event' });
    const before = edge.events.length;
    const head = await t.app.inject({ method: 'HEAD', url });
    assert.equal(head.statusCode, 404);
    assert.equal(head.headers['x-playback-error-code'], '999');
    assert.equal(head.body, '');
    assert.equal(edge.events.length, before);
    const get = await t.app.inject({ method: 'GET', url });
    assert.equal(get.statusCode, 404);
    assert.deepEqual(picked(head.headers), picked(get.headers));
  });

  test('a refused URL: the GET status and playback error code, no body, no request or error event', async () => {
    const url = t.client.playback.url('head-2', { key: 'not-the-key' });
    const before = edge.events.length;
    const head = await t.app.inject({ method: 'HEAD', url });
    assert.equal(head.statusCode, 403);
    assert.equal(head.headers['x-playback-error-code'], '110');
    assert.equal(head.body, '');
    assert.equal(edge.events.length, before, 'a refused HEAD is not counted as a failed play');
    const get = await t.app.inject({ method: 'GET', url });
    assert.equal(get.statusCode, 403);
    assert.deepEqual(picked(head.headers), picked(get.headers));
    assert.deepEqual(edge.events.slice(before).map((e) => e.type), ['request', 'error']);
  });

  test('HEAD leaves a single-use pbs unused: the GET of the same URL still plays', async () => {
    const url = t.client.playback.url('head-3', { params: [['pbs', 'b1946ac9-2492-4f6c-9a3c-33f2a1c1d0e4']] });
    assert.equal((await t.app.inject({ method: 'HEAD', url })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'HEAD', url })).statusCode, 200);
    const get = await t.app.inject({ method: 'GET', url });
    assert.equal(get.statusCode, 200, get.body);
    const again = await t.app.inject({ method: 'HEAD', url });
    assert.equal(again.statusCode, 409, 'once played, HEAD answers what a GET would: the session was used');
    assert.equal(again.headers['x-playback-error-code'], '127');
  });

  test('a session\'s variant playlist and segment: 200, GET headers, no body, no manifest or start', async () => {
    const url = t.client.playback.url('head-1');
    const multivariant = await t.app.inject({ method: 'GET', url });
    const variant = variantUris(url, multivariant.body)[0] as string;
    const before = edge.events.length;
    const headVariant = await t.app.inject({ method: 'HEAD', url: variant });
    assert.equal(headVariant.statusCode, 200);
    assert.equal(headVariant.body, '');
    const getVariant = await t.app.inject({ method: 'GET', url: variant });
    assert.deepEqual(picked(headVariant.headers), picked(getVariant.headers));
    assert.equal(headVariant.headers['content-length'], getVariant.headers['content-length']);
    const segment = mediaUris(variant, getVariant.body).segments[0] as string;
    const headSegment = await t.app.inject({ method: 'HEAD', url: segment });
    assert.equal(headSegment.statusCode, 200);
    assert.equal(headSegment.body, '');
    const getSegment = await t.app.inject({ method: 'GET', url: segment });
    assert.deepEqual(picked(headSegment.headers), picked(getSegment.headers));
    assert.equal(headSegment.headers['content-length'], getSegment.headers['content-length']);
    assert.deepEqual(edge.events.slice(before).map((e) => e.type), ['manifest', 'start'], 'only the GETs count');
  });
});
