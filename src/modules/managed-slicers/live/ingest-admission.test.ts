import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { FakeClock } from '../../../platform/clock.js';
import { IngestAdmission, type AdmissionProtocol } from './ingest-admission.js';

const KEY = 'k'.repeat(32);
const PAUSE_MS = 2_000;

const admissionOf = (pauseMs = PAUSE_MS) => {
  const clock = new FakeClock();
  const registry = new Registry();
  const warnings: Array<Record<string, unknown>> = [];
  const admission = new IngestAdmission({ clock, pauseMs, registry, log: { warn: (obj) => void warnings.push(obj as Record<string, unknown>) } });
  admission.enroll('slicer-1', 'ws-1', KEY);
  const refusals = async () => (await registry.getMetricsAsJSON())[0]?.values.map((v) => [v.labels.protocol, v.labels.reason, v.value]) ?? [];
  return { clock, admission, warnings, refusals };
};

// One table for every protocol: the same policy whichever way the encoder comes in.
const protocols: AdmissionProtocol[] = ['srt', 'rtmp', 'rist', 'hls'];

for (const protocol of protocols) {
  test(`${protocol}: a wrong key is refused, counted and logged once; the right key is admitted`, async () => {
    const { admission, warnings, refusals } = admissionOf();
    assert.deepEqual(admission.admit({ protocol, slicerId: 'slicer-1', presentedKey: 'x'.repeat(32), remoteAddress: '198.51.100.7' }), { admitted: false, reason: 'bad_key' });
    assert.deepEqual(admission.admit({ protocol, slicerId: 'slicer-1', presentedKey: KEY, remoteAddress: '198.51.100.8' }), { admitted: true });
    assert.deepEqual(await refusals(), [[protocol, 'bad_key', 1]]);
    assert.deepEqual(warnings.map((w) => [w.protocol, w.slicerId, w.remoteAddress]), [[protocol, 'slicer-1', '198.51.100.7']]);
    assert.doesNotMatch(JSON.stringify(warnings), /xxxx|kkkk/, 'no key in the log');
  });

  test(`${protocol}: repeated failures pause the address (the right key too) on the clock; other addresses are not paused`, async () => {
    const { clock, admission, warnings, refusals } = admissionOf();
    const from = (remoteAddress: string, presentedKey: string) => admission.admit({ protocol, slicerId: 'slicer-1', presentedKey, remoteAddress });
    assert.equal(from('203.0.113.5', 'guess-1').admitted, false);
    for (let i = 0; i < 5; i++) assert.deepEqual(from('203.0.113.5', i === 4 ? KEY : `guess-${i + 2}`), { admitted: false, reason: 'paused' });
    assert.deepEqual(from('203.0.113.6', KEY), { admitted: true }, 'another address publishes');
    clock.advance(PAUSE_MS - 1);
    assert.deepEqual(from('203.0.113.5', KEY), { admitted: false, reason: 'paused' });
    clock.advance(1);
    assert.deepEqual(from('203.0.113.5', KEY), { admitted: true }, 'the pause is over');
    assert.deepEqual(await refusals(), [[protocol, 'bad_key', 1], [protocol, 'paused', 6]]);
    assert.equal(warnings.length, 1, 'one log line per pause, not per refused attempt');
  });
}

test('a refusal a listener saw itself (ffmpeg\'s SRT/RIST, the RIST front) is counted, logged and paused alike', async () => {
  const { admission, warnings, refusals } = admissionOf();
  admission.refused('srt', 'slicer-1', '192.0.2.1');
  assert.deepEqual(admission.admit({ protocol: 'rist', slicerId: 'slicer-1', presentedKey: KEY, remoteAddress: '192.0.2.1' }), { admitted: false, reason: 'paused' });
  assert.deepEqual(await refusals(), [['srt', 'bad_key', 1], ['rist', 'paused', 1]]);
  assert.equal(warnings.length, 1);
});

test('a key is the live event\'s while it runs: another workspace, another slicer, an empty or withdrawn key are refused', () => {
  const { admission } = admissionOf(0);
  const withdraw = admission.enroll('slicer-2', 'ws-2', 'z'.repeat(32));
  const ask = (slicerId: string, presentedKey: string, owner?: string) => admission.admit({ protocol: 'hls', slicerId, presentedKey, remoteAddress: '192.0.2.9', ...(owner ? { owner } : {}) }).admitted;
  assert.equal(ask('slicer-2', 'z'.repeat(32), 'ws-2'), true);
  assert.equal(ask('slicer-2', 'z'.repeat(32), 'ws-1'), false, 'the URL names another workspace');
  assert.equal(ask('slicer-1', 'z'.repeat(32)), false, 'another slicer\'s key');
  assert.equal(ask('slicer-3', ''), false, 'an unknown slicer with an empty key');
  assert.equal(admission.keyOf('slicer-2'), 'z'.repeat(32), 'the key material SRT/RIST listeners are given');
  withdraw();
  assert.equal(ask('slicer-2', 'z'.repeat(32), 'ws-2'), false, 'the event stopped here');
  assert.equal(admission.keyOf('slicer-2'), undefined);
});

test('PLAYLINE_INGEST_FAILURE_PAUSE_MS=0: no pause, every refusal still counted', async () => {
  const { admission, refusals } = admissionOf(0);
  assert.equal(admission.admit({ protocol: 'rtmp', slicerId: 'slicer-1', presentedKey: 'nope', remoteAddress: '192.0.2.2' }).admitted, false);
  assert.equal(admission.admit({ protocol: 'rtmp', slicerId: 'slicer-1', presentedKey: KEY, remoteAddress: '192.0.2.2' }).admitted, true);
  assert.deepEqual(await refusals(), [['rtmp', 'bad_key', 1]]);
});

test('a flood of failing addresses keeps the pause map bounded (the oldest pause goes first)', () => {
  const { admission } = admissionOf();
  for (let i = 0; i < 10_001; i++) admission.refused('srt', 'slicer-1', `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
  assert.equal(admission.admit({ protocol: 'srt', slicerId: 'slicer-1', presentedKey: KEY, remoteAddress: '10.0.0.0' }).admitted, true, 'the first address was forgotten');
  assert.equal(admission.admit({ protocol: 'srt', slicerId: 'slicer-1', presentedKey: KEY, remoteAddress: '10.0.39.16' }).admitted, false, 'the last one is still paused');
});
