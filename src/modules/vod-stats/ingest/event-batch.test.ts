import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../../platform/errors.js';
import { parseEventBatch } from './event-batch.js';

const NOW = Date.UTC(2026, 10, 21, 10, 0, 0);
const ctx = { authOwner: 'ws1', anyOwner: false, now: NOW };
const line = (e: Record<string, unknown>): string =>
  JSON.stringify({ type: 'start', owner: 'ws1', asset_id: 'a1', session_id: 's1', ...e });

test('a batch of 1000 lines with 3 bad ones accepts 997 and reports the 3 by line index with a reason', () => {
  const lines: string[] = [];
  for (let i = 0; i < 1000; i++) lines.push(line({ session_id: `s${i}`, ts: NOW - i }));
  lines[10] = '{"type":"start",';
  lines[500] = line({ type: 'pause' });
  lines[999] = line({ owner: 'someone-else' });
  const { events, rejected } = parseEventBatch(Buffer.from(lines.join('\n')), 'ndjson', ctx);
  assert.equal(events.length, 997);
  assert.deepEqual(
    rejected.map((r) => [r.index, r.code]),
    [
      [10, 'malformed_json'],
      [500, 'invalid_field'],
      [999, 'owner_mismatch'],
    ],
  );
  for (const r of rejected) assert.ok(r.detail.length > 0);
  assert.equal(events[0]?.session_id, 's0');
  assert.equal(events[996]?.session_id, 's998');
});

test('events are normalised: ts defaults to receipt time, later ts is clamped, nulls become undefined', () => {
  const body = [line({}), line({ ts: NOW + 60_000 }), line({ ts: NOW - 5 }), line({ type: 'manifest', ts: null, latency_ms: null })].join('\r\n');
  const { events } = parseEventBatch(body, 'ndjson', ctx);
  assert.deepEqual(
    events.map((e) => e.ts),
    [NOW, NOW, NOW - 5, NOW],
  );
  assert.equal(events[3]?.latency_ms, undefined);
  assert.deepEqual({ ...events[0] }, { type: 'start', owner: 'ws1', asset_id: 'a1', session_id: 's1', ts: NOW });
});

test('blank lines are skipped but keep their index; a trailing newline adds nothing', () => {
  const body = `${line({})}\n\n   \n${line({ type: 'nope' })}\n`;
  const { events, rejected } = parseEventBatch(body, 'ndjson', ctx);
  assert.equal(events.length, 1);
  assert.deepEqual(rejected.map((r) => r.index), [3]);
});

test('a line over 16 KiB is rejected, one of exactly 16 KiB is not', () => {
  // Unknown members are ignored, so they pad a line without breaking any field limit.
  const base = line({ type: 'error', error_code: 103, msg: '', pad: '' });
  const exact = base.replace('"pad":""', `"pad":"${'x'.repeat(16 * 1024 - base.length)}"`);
  assert.equal(Buffer.byteLength(exact), 16 * 1024);
  // Multi-byte characters count as bytes, not characters.
  const tooLong = base.replace('"pad":""', `"pad":"${'é'.repeat(8200)}"`);
  const { events, rejected } = parseEventBatch([exact, tooLong].join('\n'), 'ndjson', ctx);
  assert.equal(events.length, 1);
  assert.deepEqual(rejected.map((r) => [r.index, r.code]), [[1, 'line_too_long']]);
});

test('owner must be the authenticated workspace unless an ingest key (anyOwner) sends it', () => {
  const body = [line({ owner: 'ws2' }), line({ owner: '' }), line({ owner: undefined })].join('\n');
  const asApi = parseEventBatch(body, 'ndjson', ctx);
  assert.deepEqual(asApi.rejected.map((r) => r.code), ['owner_mismatch', 'invalid_field', 'invalid_field']);
  const asIngest = parseEventBatch(body, 'ndjson', { ...ctx, anyOwner: true });
  assert.equal(asIngest.events.length, 1);
  assert.equal(asIngest.events[0]?.owner, 'ws2');
});

test('error codes: unknown codes and a missing code count as 999, non-integers are rejected', () => {
  const body = [
    line({ type: 'error', error_code: 103, http_status: 403, url: 'u', ip: '1.2.3.4', ua: 'ua', msg: 'm' }),
    line({ type: 'error', error_code: 131 }),
    line({ type: 'error' }),
    line({ type: 'error', error_code: '103' }),
    line({ type: 'error', error_code: 10.5 }),
    line({ type: 'start', error_code: 103 }),
    line({ type: 'error', http_status: 99 }),
  ].join('\n');
  const { events, rejected } = parseEventBatch(body, 'ndjson', ctx);
  assert.deepEqual(events.map((e) => e.error_code), [103, 999, 999]);
  assert.equal(events[0]?.http_status, 403);
  assert.equal(events[0]?.url, 'u');
  assert.deepEqual(rejected.map((r) => r.index), [3, 4, 5, 6]);
});

test('latency_ms only on manifest and ad events, and never negative', () => {
  const body = [
    line({ type: 'manifest', latency_ms: 12.5 }),
    line({ type: 'ad', latency_ms: 0 }),
    line({ type: 'start', latency_ms: 3 }),
    line({ type: 'manifest', latency_ms: -1 }),
    line({ type: 'manifest', latency_ms: '3' }),
    '{"type":"ad","owner":"ws1","asset_id":"a","session_id":"s","latency_ms":1e400}',
    line({ type: 'manifest', latency_ms: null }),
  ].join('\n');
  const { events, rejected } = parseEventBatch(body, 'ndjson', ctx);
  assert.deepEqual(events.map((e) => e.latency_ms), [12.5, 0, undefined]);
  assert.deepEqual(rejected.map((r) => r.index), [2, 3, 4, 5]);
});

test('ts must be a non-negative integer within the 24 h serving window', () => {
  const body = [
    line({ ts: 1.5 }),
    line({ ts: -1 }),
    line({ ts: '2026' }),
    line({ ts: NOW - 24 * 3600_000 - 1 }),
    line({ ts: NOW - 24 * 3600_000 }),
  ].join('\n');
  const { events, rejected } = parseEventBatch(body, 'ndjson', ctx);
  assert.equal(events.length, 1);
  assert.deepEqual(rejected.map((r) => r.code), ['invalid_field', 'invalid_field', 'invalid_field', 'ts_out_of_range']);
});

test('ids must be non-empty strings of at most 256 characters; non-objects are rejected', () => {
  const body = [
    line({ asset_id: 'x'.repeat(257) }),
    line({ session_id: 5 }),
    '[1,2]',
    'null',
    '"start"',
  ].join('\n');
  const { rejected } = parseEventBatch(body, 'ndjson', ctx);
  assert.deepEqual(rejected.map((r) => r.code), ['invalid_field', 'invalid_field', 'not_an_object', 'not_an_object', 'not_an_object']);
  assert.match(rejected[0]?.detail ?? '', /asset_id/);
});

test('a JSON array body is validated per element; a non-array or broken body is a 400', () => {
  const { events, rejected } = parseEventBatch(
    JSON.stringify([{ type: 'request', owner: 'ws1', asset_id: 'a', session_id: 's' }, { type: 'x' }]),
    'json',
    ctx,
  );
  assert.equal(events.length, 1);
  assert.deepEqual(rejected.map((r) => r.index), [1]);
  assert.throws(() => parseEventBatch('{"type":"start"}', 'json', ctx), (e: unknown) => e instanceof AppError && e.code === 'validation_failed');
  assert.throws(() => parseEventBatch('[{', 'json', ctx), (e: unknown) => e instanceof AppError && e.code === 'malformed_json');
});
