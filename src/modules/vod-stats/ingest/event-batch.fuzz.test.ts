import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Value } from '@sinclair/typebox/value';
import { AppError } from '../../../platform/errors.js';
import { MAX_EVENT_LINE_BYTES, MAX_LATENCY_MS, MAX_LISTED_REJECTIONS, PlaybackEventInputSchema, PlaybackEventSchema, type PlaybackEvent } from '../events.schema.js';
import { RETENTION_MS } from '../stats-window.js';
import { parseEventBatch, parseEventBatchSync, type ParsedEventBatch } from './event-batch.js';
import type { EventBatchContext } from './event-fields.js';
import { MIN_EVENT_CHARS } from './event-fields.js';

/** Fixed seed and bounded runs: the same inputs every time, a few seconds at most. */
const RUNS = { seed: 20261122, numRuns: 300 };
const NOW = Date.UTC(2026, 10, 21, 10, 0, 0);
const ctx: EventBatchContext = { now: NOW, owners: new Set(['ws1', 'ws2']), foreignOwnerCode: 'owner_not_allowed' };

/** What any accepted event must be, checked independently of the parser's own code. */
const assertValid = (e: PlaybackEvent): void => {
  assert.ok(Value.Check(PlaybackEventSchema, e), `schema: ${JSON.stringify(e)}`);
  assert.ok(ctx.owners?.has(e.owner), 'owner allowed');
  assert.ok(e.ts <= NOW && e.ts >= NOW - RETENTION_MS, 'ts within the serving window');
  if (e.latency_ms !== undefined) {
    assert.ok(e.type === 'manifest' || e.type === 'ad');
    assert.ok(Number.isFinite(e.latency_ms) && e.latency_ms >= 0 && e.latency_ms <= MAX_LATENCY_MS);
  }
  if (e.type === 'error') assert.ok(e.error_code !== undefined && ((e.error_code >= 100 && e.error_code <= 130) || e.error_code === 999));
  else assert.equal(e.error_code, undefined);
};

/** Counts add up, listings are ordered and bounded, every event is valid. */
const assertConsistent = (parsed: ParsedEventBatch, items: number): void => {
  assert.equal(parsed.events.length + parsed.rejectedCount, items, 'accepted + rejected = events sent');
  assert.equal(parsed.rejected.length, Math.min(parsed.rejectedCount, MAX_LISTED_REJECTIONS));
  assert.equal(parsed.indexes.length, parsed.events.length);
  const listed = parsed.rejected.map((r) => r.index);
  for (let i = 1; i < listed.length; i++) assert.ok((listed[i] as number) > (listed[i - 1] as number), 'rejections by index');
  for (let i = 1; i < parsed.indexes.length; i++) assert.ok((parsed.indexes[i] as number) > (parsed.indexes[i - 1] as number), 'events in order');
  for (const index of listed) assert.ok(!parsed.indexes.includes(index), 'an event is accepted or rejected, not both');
  for (const e of parsed.events) assertValid(e);
};

/** Values shaped like events: every field present or not, of the right type or not. */
const eventLike = fc.record(
  {
    type: fc.oneof({ weight: 5, arbitrary: fc.constantFrom('request', 'manifest', 'ad', 'start', 'error', 'pause') }, fc.jsonValue()),
    owner: fc.oneof({ weight: 5, arbitrary: fc.constantFrom('ws1', 'ws2', 'ws3', '') }, fc.string({ maxLength: 300 }), fc.jsonValue()),
    asset_id: fc.oneof({ weight: 5, arbitrary: fc.string({ minLength: 1, maxLength: 8 }) }, fc.string({ maxLength: 300 }), fc.jsonValue()),
    session_id: fc.oneof({ weight: 5, arbitrary: fc.string({ minLength: 1, maxLength: 8 }) }, fc.jsonValue()),
    ts: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: NOW - RETENTION_MS - 10, max: NOW + 10 }) }, fc.double(), fc.jsonValue()),
    latency_ms: fc.oneof(
      { weight: 5, arbitrary: fc.double({ min: -1, max: MAX_LATENCY_MS * 1.1 }) },
      fc.constantFrom(1.7e308, -0, 0, MAX_LATENCY_MS),
      fc.jsonValue(),
    ),
    error_code: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 90, max: 1000 }) }, fc.double(), fc.jsonValue()),
    http_status: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 0, max: 700 }) }, fc.jsonValue()),
    url: fc.oneof({ weight: 5, arbitrary: fc.string() }, fc.jsonValue()),
    extra: fc.jsonValue(),
  },
  { requiredKeys: ['type', 'owner', 'asset_id', 'session_id'] },
);

/** Events every check lets through (so the properties see both sides of each check). */
const goodEvent = fc.oneof(
  fc.record({
    type: fc.constantFrom('request', 'start'),
    owner: fc.constantFrom('ws1', 'ws2'),
    asset_id: fc.string({ minLength: 1, maxLength: 40 }),
    session_id: fc.string({ minLength: 1, maxLength: 40 }),
    ts: fc.option(fc.integer({ min: NOW - RETENTION_MS, max: NOW + 60_000 })),
  }),
  fc.record({
    type: fc.constantFrom('manifest', 'ad'),
    owner: fc.constantFrom('ws1', 'ws2'),
    asset_id: fc.string({ minLength: 1, maxLength: 40 }),
    session_id: fc.string({ minLength: 1, maxLength: 40 }),
    latency_ms: fc.option(fc.double({ min: 0, max: MAX_LATENCY_MS, noNaN: true })),
  }),
  fc.record({
    type: fc.constant('error'),
    owner: fc.constantFrom('ws1', 'ws2'),
    asset_id: fc.string({ minLength: 1, maxLength: 40 }),
    session_id: fc.string({ minLength: 1, maxLength: 40 }),
    error_code: fc.option(fc.integer({ min: -5, max: 2000 })),
    http_status: fc.option(fc.integer({ min: 100, max: 599 })),
    msg: fc.option(fc.string()),
  }),
);

/** A line: a good event, an event-like value, any JSON value, a damaged event, or any text. */
const line = fc.oneof(
  { weight: 3, arbitrary: goodEvent.map((e) => JSON.stringify(e)) },
  { weight: 3, arbitrary: eventLike.map((e) => JSON.stringify(e)) },
  { weight: 1, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 1, arbitrary: fc.tuple(eventLike, fc.nat()).map(([e, cut]) => JSON.stringify(e).slice(0, cut)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }) },
);

const isBlank = (l: string): boolean => l.trim() === '';

const ERROR_ONLY = ['error_code', 'http_status', 'url', 'ip', 'ua', 'msg'];
const OPTIONAL = ['ts', 'latency_ms', ...ERROR_ONLY];

/** DESIGN §3.1 said another way (the published schema plus the rules it cannot express), to compare with the parser. */
const acceptable = (text: string): boolean => {
  if (Buffer.byteLength(text) > MAX_EVENT_LINE_BYTES) return false;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const e: Record<string, unknown> = { ...value };
  for (const key of OPTIONAL) if (e[key] === null) delete e[key];
  if (e.type !== 'error') {
    if (e.error_code !== undefined) return false;
    for (const key of ERROR_ONLY) delete e[key];
  }
  if (!Value.Check(PlaybackEventInputSchema, e)) return false;
  if (!ctx.owners?.has(e.owner as string)) return false;
  if (e.ts !== undefined && (!Number.isSafeInteger(e.ts) || (e.ts as number) < NOW - RETENTION_MS)) return false;
  if (e.latency_ms !== undefined && e.type !== 'manifest' && e.type !== 'ad') return false;
  if (e.error_code !== undefined && !Number.isSafeInteger(e.error_code)) return false;
  return true;
};

test('NDJSON from any bytes: never throws, counts add up, every accepted event is valid', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 4000 }), (bytes) => {
      const body = Buffer.from(bytes);
      const text = body.toString('utf8');
      const lines = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split('\n');
      assertConsistent(parseEventBatchSync(body, 'ndjson', ctx), lines.filter((l) => !isBlank(l)).length);
    }),
    RUNS,
  );
});

test('NDJSON of event-like lines: exactly the valid ones accepted, in order, with their line numbers', () => {
  let accepted = 0;
  let rejected = 0;
  fc.assert(
    fc.property(fc.array(line, { maxLength: 300, size: 'medium' }), (generated) => {
      const body = generated.join('\n');
      const parsed = parseEventBatchSync(body, 'ndjson', ctx);
      // Generated text may hold newlines of its own: the lines are what the body splits into.
      const lines = body.split('\n');
      const counted = lines.filter((l) => !isBlank(l));
      assertConsistent(parsed, counted.length);
      accepted += parsed.events.length;
      rejected += parsed.rejectedCount;
      const expected = lines.flatMap((l, i) => (acceptable(l) ? [i] : []));
      assert.deepEqual(parsed.indexes, expected, 'exactly the events the rules allow');
      // A line too short to be an event is never one.
      for (const index of parsed.indexes) assert.ok((lines[index] as string).length >= MIN_EVENT_CHARS);
    }),
    RUNS,
  );
  // The generator reaches both sides of every check, not only junk.
  assert.ok(accepted > 1000 && rejected > 1000, `accepted ${accepted}, rejected ${rejected}`);
});

test('JSON from any text: valid arrays are read as JSON.parse reads them, anything else is a documented 400', () => {
  const texts = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.array(fc.oneof(goodEvent, eventLike, fc.jsonValue()), { maxLength: 50 }).map((a) => JSON.stringify(a, null, a.length % 3)),
    fc.tuple(fc.array(eventLike, { maxLength: 20 }), fc.nat()).map(([a, cut]) => JSON.stringify(a).slice(0, cut)),
    fc.jsonValue().map((v) => JSON.stringify(v) ?? ''),
  );
  fc.assert(
    fc.property(texts, (text) => {
      let whole: unknown;
      let valid = true;
      try {
        whole = JSON.parse(text);
      } catch {
        valid = false;
      }
      let parsed: ParsedEventBatch | undefined;
      let refusal: string | undefined;
      try {
        parsed = parseEventBatchSync(text, 'json', ctx);
      } catch (error) {
        assert.ok(error instanceof AppError, `only AppErrors: ${String(error)}`);
        refusal = error.code;
      }
      if (valid && Array.isArray(whole)) {
        assert.ok(parsed, 'a valid array is read');
        assertConsistent(parsed, whole.length);
      } else if (valid) assert.equal(refusal, 'validation_failed');
      else assert.ok(refusal === 'malformed_json' || refusal === 'validation_failed', `refused with ${refusal}`);
    }),
    RUNS,
  );
});

test('the sliced parse and the one-go parse agree', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(line, { minLength: 2000, maxLength: 2600 }), fc.constantFrom('ndjson' as const, 'json' as const), async (lines, kind) => {
      const body = kind === 'ndjson' ? lines.join('\n') : `[${lines.map((l) => (safeJson(l) ? l : JSON.stringify(l))).join(',')}]`;
      assert.deepEqual(await parseEventBatch(body, kind, ctx), parseEventBatchSync(body, kind, ctx));
    }),
    { seed: RUNS.seed, numRuns: 10 },
  );
});

const safeJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};
