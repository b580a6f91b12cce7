import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import { eventually } from '../../../test/helpers/eventually.js';
import { mediaToolsSkip } from '../../../test/helpers/media.js';
import type { PlaylineClient } from '../../client/index.js';

const skip = await mediaToolsSkip();
const MiB = 1024 * 1024;

/** A chunked body of `bytes` MPEG-TS sync bytes, made as it is sent. */
const tsBody = (bytes: number): Readable => {
  let left = bytes;
  const chunk = Buffer.alloc(64 * 1024, 0x47);
  return new Readable({
    read() {
      if (left <= 0) return void this.push(null);
      const size = Math.min(left, chunk.length);
      left -= size;
      this.push(size === chunk.length ? chunk : chunk.subarray(0, size));
    },
  });
};

/** A PUT over a real connection, chunked (no Content-Length) unless `bytes` is a Buffer. */
const put = (port: number, path: string, body: Readable | Buffer): Promise<number> =>
  new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'PUT', path, headers: { 'content-type': 'video/mp2t' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(res.statusCode ?? 0));
    });
    // The server answers 503 and closes while the body is still going: the client sees a reset.
    req.on('error', () => resolve(0));
    if (Buffer.isBuffer(body)) req.end(body);
    else body.pipe(req);
  });

async function hlsSlicerPath(client: PlaylineClient): Promise<string> {
  const slicer = await client.managedSlicers.create({ name: 'Pushed', region: 'eu-central-1', ingest_protocol: 'hls', output_profile: 'passthrough' });
  await eventually(async () => (await client.managedSlicers.getTask(slicer.task.id)).state === 'COMPLETED', 'the slicer runs');
  return new URL((await client.managedSlicers.get(slicer.id)).ingest_url ?? '').pathname.replace(/\/index\.m3u8$/, '');
}

describe('hls push bytes in flight: a refused burst gives every byte back (issue 35 finding 3)', { skip }, () => {
  let t: TestApp;
  let port: number;
  let attacker: string;
  let other: string;
  before(async () => {
    t = await createTestApp({ env: { PLAYLINE_HLS_PUSH_MAX_BYTES_IN_FLIGHT: String(32 * MiB), PLAYLINE_SLICER_PROVISIONER: 'ffmpeg', PLAYLINE_REGIONS: 'eu-central-1' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
    t.runtime.managedSlicers.listening(port);
    attacker = await hlsSlicerPath(t.client);
    other = await hlsSlicerPath(t.other.client);
  });
  after(() => t.close());

  const metric = async (): Promise<number | undefined> => {
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const line = text.split('\n').find((l) => l.startsWith('playline_hls_push_bytes_in_flight '));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  };

  test('32 parallel chunked 64 MiB PUTs to a tenant\'s own slicer: refused 503, then the in-flight metric is 0 and another workspace\'s 1 MB segment is accepted', { timeout: 120_000 }, async () => {
    const statuses = await Promise.all(Array.from({ length: 32 }, (_, i) => put(port, `${attacker}/burst${i}.ts`, tsBody(64 * MiB))));
    assert.ok(statuses.filter((s) => s !== 201).length >= 28, `the burst passes the budget: ${statuses.join(',')}`);
    const budget = t.runtime.managedSlicers.hlsPush.inFlight;
    // The answers are out; the last connections may still be closing.
    await eventually(() => budget.bytes === 0, `every byte is given back (held: ${budget.bytes})`, 30_000).catch(() => undefined);
    assert.equal(budget.bytes, 0, 'no byte of the refused burst stays held');
    assert.equal(await metric(), 0, 'the in-flight metric reads 0');
    assert.equal(await put(port, `${other}/seg0.ts`, Buffer.alloc(MiB, 0x47)), 201, 'another workspace pushes a 1 MB segment');
    assert.equal(await put(port, `${other}/seg1.ts`, tsBody(MiB)), 201, 'and a chunked one');
  });
});
