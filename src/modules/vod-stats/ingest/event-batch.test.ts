import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { AppError } from '../../../platform/errors.js';
import { parseEventBatch as parseEventBatchAsync, parseEventBatchSync as parseEventBatch } from './event-batch.js';
import type { EventBatchContext } from './event-fields.js';

const NOW = Date.UTC(2026, 10, 21, 10, 0, 0);
const ctx: EventBatchContext = { now: NOW, owners: new Set(['ws1']), foreignOwnerCode: 'owner_mismatch' };
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
  const defined = Object.fromEntries(Object.entries(events[0] ?? {}).filter(([, v]) => v !== undefined));
  assert.deepEqual(defined, { type: 'start', owner: 'ws1', asset_id: 'a1', session_id: 's1', ts: NOW });
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

test('owner must be one of the workspaces the batch may name (any for the playback edge)', () => {
  const body = [line({ owner: 'ws2' }), line({ owner: '' }), line({ owner: undefined })].join('\n');
  const asApi = parseEventBatch(body, 'ndjson', ctx);
  assert.deepEqual(asApi.rejected.map((r) => r.code), ['owner_mismatch', 'invalid_field', 'invalid_field']);
  assert.equal(asApi.rejected[0]?.owner, 'ws2', 'the refused owner is kept for the intake (unknown vs not allowed)');
  const asEdge = parseEventBatch(body, 'ndjson', { ...ctx, owners: null });
  assert.equal(asEdge.events.length, 1);
  assert.equal(asEdge.events[0]?.owner, 'ws2');
  const asIngestKey = parseEventBatch(body, 'ndjson', { ...ctx, owners: new Set(['ws1', 'ws3']), foreignOwnerCode: 'owner_not_allowed' });
  assert.deepEqual(asIngestKey.rejected.map((r) => r.code), ['owner_not_allowed', 'invalid_field', 'invalid_field']);
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

test('latency_ms only on manifest and ad events, a finite number from 0 to 3,600,000', () => {
  const body = [
    line({ type: 'manifest', latency_ms: 12.5 }),
    line({ type: 'ad', latency_ms: 0 }),
    line({ type: 'start', latency_ms: 3 }),
    line({ type: 'manifest', latency_ms: -1 }),
    line({ type: 'manifest', latency_ms: '3' }),
    '{"type":"ad","owner":"ws1","asset_id":"a","session_id":"s","latency_ms":1e400}',
    line({ type: 'manifest', latency_ms: null }),
    line({ type: 'manifest', latency_ms: 3_600_000 }),
    // Two of these once summed to Infinity, and the snapshot that stored it could not be read.
    line({ type: 'manifest', latency_ms: 1.7e308 }),
    line({ type: 'ad', latency_ms: 3_600_000.5 }),
  ].join('\n');
  const { events, rejected } = parseEventBatch(body, 'ndjson', ctx);
  assert.deepEqual(events.map((e) => e.latency_ms), [12.5, 0, undefined, 3_600_000]);
  assert.deepEqual(rejected.map((r) => r.index), [2, 3, 4, 5, 8, 9]);
  assert.match(rejected[4]?.detail ?? '', /finite number from 0 to 3600000/);
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

test('a JSON array is walked element by element exactly as JSON.parse reads it', () => {
  const ok = (text: string) => parseEventBatch(text, 'json', ctx);
  const bad = (text: string) =>
    assert.throws(() => parseEventBatch(text, 'json', ctx), (e: unknown) => e instanceof AppError && e.code === 'malformed_json', text);
  const event = line({ msg: 'a "quoted", [bracketed] {braced} \\ text' });
  const spaced = ok(` \r\n\t[ ${event} ,\n${event}\t]\n `);
  assert.equal(spaced.events.length, 2);
  assert.deepEqual(ok('[]').events, []);
  assert.deepEqual(ok(' [ ] ').rejectedCount, 0);
  const mixed = ok(`[1, "x", null, true, [${event}], {"nested": {"a": [1, {}]}}, ${event}]`);
  assert.deepEqual(mixed.rejected.map((r) => [r.index, r.code]), [[0, 'not_an_object'], [1, 'not_an_object'], [2, 'not_an_object'], [3, 'not_an_object'], [4, 'not_an_object'], [5, 'invalid_field']]);
  assert.deepEqual(mixed.indexes, [6]);
  for (const text of ['[', '[1,]', '[,1]', '[1 2]', '[1]x', '[{"a":1]}]', '["a]', '[tru]', '[1,,2]', '\ufeff[]', '', ' ', '[{}', '[]]']) bad(text);
  assert.throws(() => parseEventBatch('"just a string"', 'json', ctx), (e: unknown) => e instanceof AppError && e.code === 'validation_failed');
});

test('a JSON element larger than a line may be is rejected without being decoded', () => {
  const big = line({ pad: 'x'.repeat(17 * 1024) });
  const { events, rejected } = parseEventBatch(`[${big},${line({})}]`, 'json', ctx);
  assert.equal(events.length, 1);
  assert.deepEqual(rejected.map((r) => [r.index, r.code]), [[0, 'line_too_long']]);
});

test('only the first 100 rejections are listed; rejectedCount counts them all', () => {
  const lines = Array.from({ length: 5000 }, (_, i) => (i % 2 === 0 ? 'x' : line({ session_id: `s${i}` })));
  lines.push('{"type":"start","owner":"ws1","asset_id":"a1","session_id":"s1",');
  const { events, rejected, rejectedCount, indexes } = parseEventBatch(lines.join('\n'), 'ndjson', ctx);
  assert.equal(events.length, 2500);
  assert.equal(rejected.length, 100);
  assert.equal(rejectedCount, 2501);
  assert.deepEqual(rejected.slice(0, 2).map((r) => [r.index, r.code]), [[0, 'malformed_json'], [2, 'malformed_json']]);
  assert.equal(rejected.at(-1)?.index, 198);
  assert.deepEqual(indexes.slice(0, 3), [1, 3, 5]);
  // Short blank lines are skipped, whatever is listed already.
  const blanks = parseEventBatch(`${'x\n'.repeat(200)}${'  \n'.repeat(50)}\u00a0\n${line({})}`, 'ndjson', ctx);
  assert.deepEqual([blanks.events.length, blanks.rejectedCount], [1, 200]);
});

test('every event has the same fields, unknown members dropped', () => {
  const { events } = parseEventBatch([line({ extra: { deep: [1, 2, 3] } }), line({ type: 'error', error_code: 104 })].join('\n'), 'ndjson', ctx);
  const fields = ['type', 'owner', 'asset_id', 'session_id', 'ts', 'latency_ms', 'error_code', 'http_status', 'url', 'ip', 'ua', 'msg', 'startup_ms', 'workspace_only'];
  for (const e of events) assert.deepEqual(Object.keys(e), fields);
  assert.equal((events[0] as unknown as Record<string, unknown>)['extra'], undefined);
});

test('a large batch is parsed in slices: the event loop runs between them', async () => {
  const body = Array.from({ length: 20_000 }, (_, i) => (i % 3 === 0 ? '{"not an event' : line({ session_id: `s${i}` }))).join('\n');
  let turns = 0;
  let ticking = true;
  const tick = () => {
    turns++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const parsed = await parseEventBatchAsync(body, 'ndjson', ctx);
  ticking = false;
  assert.equal(parsed.events.length + parsed.rejectedCount, 20_000);
  assert.ok(turns >= 9, `the event loop ran ${turns} times while 20,000 lines were parsed (one slice is at most 2,048 lines)`);
  assert.deepEqual(parsed, parseEventBatch(body, 'ndjson', ctx), 'the sliced parse gives the same result');
});

test('what a parsed batch keeps is bounded by its events, not by what their lines carried', () => {
  setFlagsFromString('--expose_gc');
  const gc = runInNewContext('gc') as () => void;
  // ~1,000 valid events of 16 KiB each, every one padded with an unknown member that decodes into
  // thousands of arrays (about 30 bytes of heap per 3 bytes of text).
  const padded = line({ pad: [] }).replace('"pad":[]', `"pad":[${'[],'.repeat(5300)}[]]`);
  assert.ok(Buffer.byteLength(padded) <= 16 * 1024);
  const lines = Math.floor((16 * 1024 * 1024) / (padded.length + 1));
  const body = Array.from({ length: lines }, () => padded).join('\n');
  gc();
  const before = process.memoryUsage().heapUsed;
  const parsed = parseEventBatch(body, 'ndjson', ctx);
  gc();
  const kept = process.memoryUsage().heapUsed - before;
  assert.equal(parsed.events.length, lines);
  assert.ok(kept < 4 * 1024 * 1024, `the parsed batch keeps ${Math.round(kept / 1024)} KiB for a 16 MiB body`);
});
