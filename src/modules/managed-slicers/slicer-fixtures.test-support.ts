import { FakeClock } from '../../platform/clock.js';
import { sequentialIds } from '../../platform/ids.js';
import { SecretBox } from '../../platform/secret-box.js';
import type { SlicerCreateBody } from './managed-slicers.schema.js';
import { ManagedSlicerService } from './managed-slicers.service.js';
import { InMemorySlicerStore } from './memory-slicer-store.test-support.js';
import type { ProvisionOutcome, ProvisionRequest, SlicerProvisioner } from './provisioner.js';
import type { SealedStreamKey, StreamKeyStore } from './slicer-store.js';
import { SlicerStreamKeys } from './stream-key.js';
import { SlicerTaskRunner, type RunnerLog, type TaskRunnerOptions } from './task-runner.js';

/** Shared by the managed-slicers unit tests (not a test file itself). */

export const silentLog: RunnerLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

export const regions = ['us-east-1', 'eu-central-1'];

/** The server key of unit tests. */
export const testBox = new SecretBox(Buffer.alloc(32, 9));

/** A sealed stream key for stores written to directly. */
export const sealedTestKey = (key = 'k'.repeat(32)): SealedStreamKey => testBox.seal(key) as SealedStreamKey;

export const streamKeysOf = (store: StreamKeyStore): SlicerStreamKeys => new SlicerStreamKeys(testBox, store);

export const slicerBody = (name = 'Main stage'): SlicerCreateBody => ({
  name,
  region: 'eu-central-1',
  ingest_protocol: 'rtmp',
  output_profile: 'hd-1080p',
});

/** Lets pending promise chains run (no time passes; the FakeClock does not move). */
export async function until(condition: () => boolean, what = 'condition'): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never reached: ${what}`);
}

/**
 * Moves the fake clock one simulated provisioning duration (`stepMs`) at a time until no task of
 * the workspace is open (route tests over createTestApp's simulated provisioner).
 */
export async function runAllTasks(slicers: { service: ManagedSlicerService; runner: SlicerTaskRunner }, clock: FakeClock, owner: string, stepMs = 2000): Promise<void> {
  for (let step = 0; step < 20; step++) {
    const open = (await slicers.service.listTasks(owner, { state: 'PENDING' })).total + (await slicers.service.listTasks(owner, { state: 'IN_PROGRESS' })).total;
    if (open === 0) return;
    await until(() => slicers.runner.runningTaskIds().length > 0, 'a task running');
    const running = slicers.runner.runningTaskIds().join();
    clock.advance(stepMs);
    await until(() => slicers.runner.runningTaskIds().join() !== running, 'the running tasks done');
  }
  throw new Error('tasks never finished');
}

export const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

export interface ManualCall {
  request: ProvisionRequest;
  settle(outcome: ProvisionOutcome): void;
  settled: boolean;
}

/** A provisioner whose every call waits until the test settles it. */
export class ManualProvisioner implements SlicerProvisioner {
  readonly calls: ManualCall[] = [];

  create = (r: ProvisionRequest) => this.call(r);
  update = (r: ProvisionRequest) => this.call(r);
  restart = (r: ProvisionRequest) => this.call(r);
  delete = (r: ProvisionRequest) => this.call(r);

  open(): ManualCall[] {
    return this.calls.filter((c) => !c.settled);
  }

  private call(request: ProvisionRequest): Promise<ProvisionOutcome> {
    return new Promise((resolve) => {
      const call: ManualCall = {
        request,
        settled: false,
        settle: (outcome) => {
          if (call.settled) return;
          call.settled = true;
          resolve(outcome);
        },
      };
      request.signal.addEventListener('abort', () => call.settle({ kind: 'aborted' }), { once: true });
      this.calls.push(call);
    });
  }
}

export function slicerWorld(options: Partial<TaskRunnerOptions> & { provisioner: SlicerProvisioner; clock?: FakeClock }) {
  const clock = options.clock ?? new FakeClock();
  const store = (options.store as InMemorySlicerStore | undefined) ?? new InMemorySlicerStore();
  const streamKeys = streamKeysOf(store);
  const runner = new SlicerTaskRunner({
    store,
    clock,
    streamKeyOf: (slicerId) => streamKeys.keyOfSlicer(slicerId),
    log: silentLog,
    ownerId: 'node-1',
    leaseMs: 30_000,
    pollMs: 1_000,
    ...options,
  });
  const service = new ManagedSlicerService({ store, streamKeys, clock, ids: sequentialIds(), regions, onTaskEnqueued: () => runner.claimNow() });
  return { clock, store, runner, service, streamKeys };
}
