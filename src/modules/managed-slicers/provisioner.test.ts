import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../platform/clock.js';
import type { SlicerConfig, TaskOperation } from './managed-slicers.schema.js';
import { cycleRandom, provision, SimulatedSlicerProvisioner, type ProvisionOutcome } from './provisioner.js';

const config: SlicerConfig = { name: 'Main', region: 'eu-central-1', ingest_protocol: 'srt', output_profile: 'hd-1080p' };

const request = (operation: TaskOperation, signal = new AbortController().signal, overrides: Partial<SlicerConfig> = {}) => ({
  taskId: 't1',
  slicerId: 's1',
  workspaceId: 'w1',
  operation,
  config: { ...config, ...overrides },
  streamKey: 'k'.repeat(32),
  signal,
});

const track = (promise: Promise<ProvisionOutcome>) => {
  const seen: { outcome?: ProvisionOutcome } = {};
  void promise.then((o) => (seen.outcome = o));
  return seen;
};

const flush = () => new Promise((resolve) => setImmediate(resolve));

test('a simulated operation takes the configured clock time, then succeeds with an ingest URL', async () => {
  const clock = new FakeClock();
  const provisioner = new SimulatedSlicerProvisioner({ clock, durationMs: 5000, failureRate: 0 });
  const seen = track(provisioner.create(request('CREATE')));
  clock.advance(4999);
  await flush();
  assert.equal(seen.outcome, undefined);
  clock.advance(1);
  await flush();
  assert.deepEqual(seen.outcome, { kind: 'succeeded', ingestUrl: 'srt://eu-central-1.ingest.playline.invalid:9000' });
});

test('ingest URLs follow the protocol, keyless (the view adds the stream key); RIST uses an even port; DELETE has none', async () => {
  const clock = new FakeClock();
  const provisioner = new SimulatedSlicerProvisioner({ clock, durationMs: 0, failureRate: 0 });
  const urls: Record<string, ProvisionOutcome> = {};
  for (const protocol of ['rtmp', 'rist', 'zixi', 'hls'] as const) {
    void provision(provisioner, request('UPDATE', undefined, { ingest_protocol: protocol })).then((o) => (urls[protocol] = o));
  }
  const deleted = track(provision(provisioner, request('DELETE')));
  clock.advance(0);
  await flush();
  assert.match(JSON.stringify(urls.rtmp), /"rtmp:\/\/eu-central-1\.[^"]+:1935\/live"/);
  const rist = urls.rist;
  assert.ok(rist?.kind === 'succeeded' && rist.ingestUrl !== null);
  assert.equal(Number(new URL(rist.ingestUrl.replace('rist:', 'http:')).port) % 2, 0);
  assert.match(JSON.stringify(urls.zixi), /zixi:\/\/[^"]+:2088\/s1/);
  assert.match(JSON.stringify(urls.hls), /"https:\/\/[^"]+\/ingest\/hls\/w1\/s1"/);
  assert.ok(!JSON.stringify(urls).includes('k'.repeat(32)), 'the key is in no URL the provisioner returns');
  assert.deepEqual(deleted.outcome, { kind: 'succeeded', ingestUrl: null });
});

test('the failure rate decides with the injected random source and gives a reason', async () => {
  const clock = new FakeClock();
  // 0.2 < 0.5 fails (then 0.9 picks the reason), 0.7 succeeds.
  const provisioner = new SimulatedSlicerProvisioner({ clock, durationMs: 10, failureRate: 0.5, random: cycleRandom([0.2, 0.9, 0.7]) });
  const first = track(provisioner.restart(request('RESTART')));
  const second = track(provisioner.restart(request('RESTART')));
  clock.advance(10);
  await flush();
  assert.equal(first.outcome?.kind, 'failed');
  assert.match(first.outcome?.kind === 'failed' ? first.outcome.reason : '', /^RESTART failed \(simulated\): .*hd-1080p/);
  assert.equal(second.outcome?.kind, 'succeeded');
});

test('failure rate 1 always fails, 0 never does', async () => {
  const clock = new FakeClock();
  const always = new SimulatedSlicerProvisioner({ clock, durationMs: 1, failureRate: 1, random: cycleRandom([0.999]) });
  const never = new SimulatedSlicerProvisioner({ clock, durationMs: 1, failureRate: 0, random: cycleRandom([0]) });
  const a = track(always.delete(request('DELETE')));
  const b = track(never.delete(request('DELETE')));
  clock.advance(1);
  await flush();
  assert.equal(a.outcome?.kind, 'failed');
  assert.equal(b.outcome?.kind, 'succeeded');
});

test('an abort settles the operation at once and cancels its timer', async () => {
  const clock = new FakeClock();
  const provisioner = new SimulatedSlicerProvisioner({ clock, durationMs: 60_000, failureRate: 0 });
  const controller = new AbortController();
  const seen = track(provisioner.update(request('UPDATE', controller.signal)));
  assert.equal(clock.pendingTimers(), 1);
  controller.abort();
  await flush();
  assert.deepEqual(seen.outcome, { kind: 'aborted' });
  assert.equal(clock.pendingTimers(), 0);
  assert.deepEqual(await provisioner.create(request('CREATE', controller.signal)), { kind: 'aborted' });
});
