import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PlaybackEvent } from '../vod-stats/events.schema.js';
import type { EventIngest } from '../vod-stats/ingest/event-ingest.js';
import { EDGE_SUBMITTER, IngestEventSink } from './playback-events.js';

const event = (i: number): PlaybackEvent => ({ type: 'request', owner: 'o', asset_id: 'a', session_id: `s${i}`, ts: i });

test('events emitted in one turn go to ingest as one NDJSON batch, any owner', async () => {
  const calls: Array<{ body: string; owner: string; kind: string }> = [];
  const ingest: EventIngest = {
    ingest: (body, _kind, auth) => {
      calls.push({ body: body.toString(), ...auth });
      return Promise.resolve({ accepted: body.toString().trim().split('\n').length, rejected: [], rejected_count: 0 });
    },
  };
  const sink = new IngestEventSink({ ingest });
  sink.emit([event(1), event(2)]);
  sink.emit([event(3)]);
  assert.equal(calls.length, 0, 'nothing is sent synchronously');
  await sink.flush();
  assert.equal(calls.length, 1);
  assert.deepEqual(calls[0]?.body.trim().split('\n').map((l) => (JSON.parse(l) as PlaybackEvent).session_id), ['s1', 's2', 's3']);
  assert.deepEqual([calls[0]?.owner, calls[0]?.kind], [EDGE_SUBMITTER, 'internal']);
  assert.equal(sink.counters.sent, 3);
});

test('batches are bounded, too many waiting events are dropped and counted, failures are counted', async () => {
  const sizes: number[] = [];
  let fail = false;
  const errors: string[] = [];
  const ingest: EventIngest = {
    ingest: (body) => {
      sizes.push(body.toString().trim().split('\n').length);
      return fail ? Promise.reject(new Error('journal down')) : Promise.resolve({ accepted: sizes.at(-1) ?? 0, rejected: [], rejected_count: 0 });
    },
  };
  const sink = new IngestEventSink({ ingest, maxBatch: 2, maxPending: 3, onError: (m) => errors.push(m) });
  sink.emit([event(1), event(2), event(3)]);
  assert.deepEqual(sizes, [2], 'a full batch goes at once');
  await sink.flush();
  assert.deepEqual(sizes, [2, 1]);
  fail = true;
  sink.emit([event(4)]);
  await sink.flush();
  assert.equal(sink.counters.failed, 1);
  assert.deepEqual(errors, ['playback events could not be ingested']);
  const slow = new IngestEventSink({ ingest: { ingest: () => new Promise(() => undefined) }, maxBatch: 100, maxPending: 3 });
  slow.emit([event(1), event(2), event(3), event(4), event(5)]);
  assert.equal(slow.counters.dropped, 2);
});
