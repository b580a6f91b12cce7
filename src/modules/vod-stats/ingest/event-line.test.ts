import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { EventColumns, TYPE } from '../event-columns.js';
import type { PlaybackEvent } from '../events.schema.js';
import { sessionHash } from '../session-hash.js';
import { RETENTION_MS } from '../stats-window.js';
import { parseEventBatch, parseEventColumns, type EventBatchKind } from './event-batch.js';
import { AllowedOwners, type EventBatchContext } from './event-fields.js';
import { scanEvent } from './event-line.js';

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const context = (): EventBatchContext => ({ now: NOW, owners: new AllowedOwners(new Set(['ws1', 'ws-22222222222222222222'])), foreignOwnerCode: 'owner_mismatch' });

/** Column row `i` as the event object it stands for (the session as its hash). */
const rowOf = (c: EventColumns, i: number) => ({
  type: c.type[i],
  owner: c.owner[i],
  asset: c.asset[i],
  session: c.session[i],
  ts: c.ts[i],
  value: c.valueAt(i),
  code: c.code[i],
  workspaceOnly: c.workspaceOnly(i),
  index: c.index[i],
});
const TYPES = { request: TYPE.request, manifest: TYPE.manifest, ad: TYPE.ad, start: TYPE.start, error: TYPE.error, rebuffer: TYPE.rebuffer };
const eventRow = (e: PlaybackEvent, index: number) => ({
  type: TYPES[e.type],
  owner: e.owner,
  asset: e.asset_id,
  session: sessionHash(e.session_id),
  ts: e.ts,
  value: e.type === 'start' ? e.startup_ms : e.latency_ms,
  code: e.error_code ?? 0,
  workspaceOnly: e.workspace_only === true,
  index,
});

/** Whatever the scanner takes or leaves, the columns hold what JSON.parse + toEvent accept, and the same rejections. */
const assertSameAsDecoding = async (text: string, kind: EventBatchKind): Promise<void> => {
  let objects: Awaited<ReturnType<typeof parseEventBatch>> | Error;
  let columns: Awaited<ReturnType<typeof parseEventColumns>> | Error;
  try {
    objects = await parseEventBatch(text, kind, context());
  } catch (error) {
    objects = error as Error;
  }
  try {
    columns = await parseEventColumns(text, kind, context());
  } catch (error) {
    columns = error as Error;
  }
  if (objects instanceof Error || columns instanceof Error) {
    assert.deepEqual(columns, objects, 'the same whole-batch error');
    return;
  }
  const rows = Array.from({ length: columns.columns.length }, (_, i) => rowOf(columns.columns, i));
  assert.deepEqual(rows, objects.events.map((e, i) => eventRow(e, objects.indexes[i] as number)), text);
  assert.deepEqual(columns.rejected, objects.rejected);
  assert.equal(columns.rejectedCount, objects.rejectedCount);
};

const pick = <T,>(...values: T[]) => fc.constantFrom(...values);
const space = fc.stringMatching(/^[ \t\r]{0,2}$/);
/** JSON numbers written every way the grammar allows, and some ways it does not. */
const numberText = fc.oneof(
  fc.integer({ min: NOW - RETENTION_MS - 5, max: NOW + 5 }).map(String),
  fc.integer({ min: -5, max: 5000 }).map(String),
  fc.double({ min: 0, max: 4_000_000, noNaN: true }).map((n) => JSON.stringify(n)),
  pick('-0', '0.0', '1e3', '1E+2', '2.5e-1', '12345678901234567890', '9007199254740993', '01', '1.', '.5', '-', '+1', '1e', 'NaN', 'Infinity', '3600000', '3600000.5'),
);
const stringText = fc.oneof(
  { weight: 6, arbitrary: pick('ws1', 'ws2', 'ws-22222222222222222222', 'a1', 'asset-0000000000000000000000000000', 's', '', 'x'.repeat(300)).map((s) => JSON.stringify(s)) },
  { weight: 4, arbitrary: pick('request', 'manifest', 'ad', 'start', 'error', 'rebuffer', 'pause', 'Start').map((s) => JSON.stringify(s)) },
  { weight: 2, arbitrary: fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)) },
  pick('"\\x"', '"\\u12"', '"\\u00zz"', '"\\/\\b\\f\\n\\r\\t"', '"a\\u0031"', '"ws\\u0031"', '"\\"q\\""', '"tab\there"', '"é-ü-日本"', '"\ud800"'),
);
const valueText = fc.oneof(
  { weight: 5, arbitrary: stringText },
  { weight: 4, arbitrary: numberText },
  pick('true', 'false', 'null', 'tru', '{}', '[]', '{"x":1}', '[1,2]'),
);
const keyText = fc.oneof(
  { weight: 8, arbitrary: pick('type', 'owner', 'asset_id', 'session_id', 'ts', 'latency_ms', 'startup_ms', 'workspace_only', 'error_code', 'http_status', 'url', 'msg').map((k) => JSON.stringify(k)) },
  pick('"typ\\u0065"', '"extra"', '"__proto__"', '"TS"', '""'),
);
/** A line of members, as a careless or hostile client might write one. */
const messyLine = fc.tuple(fc.array(fc.tuple(keyText, valueText, space, space), { maxLength: 9 }), space, space, pick('', '', '', 'x', ',', '}')).map(([members, before, after, tail]) => `${before}{${members.map(([k, v, s1, s2]) => `${s1}${k}${s2}:${s1}${v}${s2}`).join(',')}}${after}${tail}`);
/** A line of the common shape with valid values (what the scanner should take). */
const commonLine = fc
  .record({
    type: pick('request', 'manifest', 'ad', 'start', 'rebuffer', 'error'),
    owner: pick('ws1', 'ws-22222222222222222222', 'ws3'),
    asset_id: pick('a1', 'asset-0000000000000000000000000000', 'é-asset'),
    session_id: fc.stringMatching(/^[a-z0-9é日 -]{1,20}$/),
    ts: fc.option(fc.integer({ min: NOW - 100_000, max: NOW + 100_000 }), { nil: undefined }),
    latency_ms: fc.option(fc.double({ min: 0, max: 5000, noNaN: true }), { nil: undefined }),
    startup_ms: fc.option(fc.integer({ min: 0, max: 5000 }), { nil: undefined }),
    workspace_only: fc.option(fc.boolean(), { nil: undefined }),
    url: fc.option(fc.string({ maxLength: 5 }), { nil: undefined }),
  })
  .map((e) => JSON.stringify(e));
const batchOf = (line: fc.Arbitrary<string>) => fc.array(line, { maxLength: 30 });

test('scanned or decoded, a batch gives exactly the events and rejections of JSON.parse + toEvent (property, NDJSON and JSON)', async () => {
  await fc.assert(
    fc.asyncProperty(batchOf(fc.oneof(commonLine, messyLine)), pick<EventBatchKind>('ndjson', 'json'), async (lines, kind) => {
      const text = kind === 'ndjson' ? lines.join('\n') : `[${lines.join(',')}]`;
      await assertSameAsDecoding(text, kind);
    }),
    { seed: 20261126, numRuns: 400 },
  );
});

test('every valid line of the common shape with ASCII ids is taken by the scanner itself, as decoding would take it (property)', async () => {
  const valid = commonLine.filter((line) => {
    const e = JSON.parse(line) as Record<string, unknown>;
    const type = e.type as string;
    const ascii = [e.owner, e.asset_id, e.session_id].every((id) => /^[\x20-\x7e]*$/.test(id as string));
    return ascii && type !== 'error' && e.owner !== 'ws3' && (e.latency_ms === undefined || type === 'manifest' || type === 'ad') && (e.startup_ms === undefined || type === 'start');
  });
  await fc.assert(
    fc.asyncProperty(valid, async (line) => {
      const columns = new EventColumns();
      const bytes = Buffer.from(line);
      assert.equal(scanEvent(bytes, 0, bytes.length, context(), columns, 0), true, line);
      const decoded = await parseEventBatch(line, 'ndjson', context());
      assert.deepEqual(rowOf(columns, 0), eventRow(decoded.events[0] as PlaybackEvent, 0));
    }),
    { seed: 20261126, numRuns: 300 },
  );
});

test('the scanner takes the common shape itself, and leaves escapes, repeated members, error events and refusals alone', () => {
  const take = (line: string): boolean => {
    const bytes = Buffer.from(line);
    return scanEvent(bytes, 0, bytes.length, context(), new EventColumns(), 0);
  };
  assert.equal(take('{"type":"start","owner":"ws1","asset_id":"a1","session_id":"s1"}'), true);
  assert.equal(take(` { "ts" : ${NOW - 1000} ,"latency_ms":12.5, "type":"manifest","owner":"ws1","asset_id":"a1","session_id":"s1" , "url":null} \r`), true);
  assert.equal(take('{"type":"start","owner":"ws1","asset_id":"a1","session_id":"s\\u0031"}'), false, 'an escape');
  assert.equal(take('{"type":"start","owner":"ws1","asset_id":"a1","session_id":"s\t1"}'), false, 'a raw control character (not JSON)');
  assert.equal(take('{"type":"start","owner":"ws1","asset_id":"a1","session_id":"s1","x":"\\q"}'), false, 'a bad escape (not JSON)');
  assert.equal(take('{"type":"start","owner":"ws1","asset_id":"a1","session_id":"s1","x":"\\u00e9\\n"}'), true, 'escapes in a member nobody reads');
  assert.equal(take('{"type":"start","type":"ad","owner":"ws1","asset_id":"a1","session_id":"s1"}'), false, 'a member twice');
  assert.equal(take('{"type":"error","owner":"ws1","asset_id":"a1","session_id":"s1"}'), false, 'an error event');
  assert.equal(take('{"type":"start","owner":"ws9","asset_id":"a1","session_id":"s1"}'), false, 'another workspace');
  assert.equal(take('{"type":"start","owner":"ws1","asset_id":"a1","session_id":"s1","latency_ms":3}'), false, 'latency on a start');
  assert.equal(take('{"type":"start","owner":"ws1","asset_id":"a1","session_id":"s1","extra":{"nested":1}}'), false, 'a nested value');
  assert.equal(take('{"type":"start","owner":"ws1","asset_id":"a1","session_id":"s1"}x'), false, 'text after the object');
  assert.equal(take('{"type":"start","owner":"ws1","asset_id":"a1","session_id":"sé"}'), false, 'an id that is not ASCII (decoded the general way)');
  assert.equal(take('{"type":"start","owner":"ws1","asset_id":"a1","session_id":"s1","note":"é"}'), true, 'not ASCII in a member nobody reads');
});

test('an event is read from its line\'s bytes only: an asset id, its workspace and its session as decoding gives them', () => {
  const columns = new EventColumns();
  const id = `asset-${'7'.repeat(40)}`;
  const line = Buffer.from(`{"type":"start","owner":"ws1","asset_id":"${id}","session_id":"s1"}\n{"type":"ad"`);
  assert.equal(scanEvent(line, 0, line.indexOf(0x0a), context(), columns, 0), true);
  assert.equal(columns.asset[0], id);
  assert.equal(columns.owner[0], 'ws1');
  assert.equal(columns.session[0], sessionHash('s1'));
  assert.equal(columns.ts[0], NOW);
});

test('bodies with bytes that are not UTF-8, byte-order marks and CRLF give the events and rejections of decoding the whole body (property)', async () => {
  const junk = fc.uint8Array({ minLength: 1, maxLength: 4 }).map((b) => Buffer.from(b));
  const piece = fc.oneof({ weight: 6, arbitrary: commonLine.map((l) => Buffer.from(l)) }, junk, fc.constant(Buffer.from('\r')), fc.constant(Buffer.from([0xef, 0xbb, 0xbf])));
  await fc.assert(
    fc.asyncProperty(fc.array(fc.array(piece, { minLength: 1, maxLength: 3 }), { maxLength: 20 }), async (lines) => {
      const body = Buffer.concat(lines.flatMap((parts) => [...parts, Buffer.from('\n')]));
      const objects = await parseEventBatch(body, 'ndjson', context());
      const columns = await parseEventColumns(body, 'ndjson', context());
      const rows = Array.from({ length: columns.columns.length }, (_, i) => rowOf(columns.columns, i));
      assert.deepEqual(rows, objects.events.map((e, i) => eventRow(e, objects.indexes[i] as number)));
      assert.deepEqual(columns.rejected, objects.rejected);
      assert.equal(columns.rejectedCount, objects.rejectedCount);
    }),
    { seed: 20261126, numRuns: 300 },
  );
});
