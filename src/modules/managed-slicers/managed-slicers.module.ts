import { hostname } from 'node:os';
import { moduleLogger } from '../../platform/logger.js';
import type { Clock } from '../../platform/clock.js';
import { listSetting, type Config, type DeploymentMode } from '../../platform/config.js';
import type { Storage } from '../../platform/db/database.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { BackgroundWork } from '../../platform/background-work.js';
import { ManagedSlicerService } from './managed-slicers.service.js';
import { SlicerRepository } from './managed-slicers.repository.js';
import { SimulatedSlicerProvisioner, type SlicerProvisioner } from './provisioner.js';
import { SlicerTaskRunner, type RunnerLog } from './task-runner.js';

export interface ManagedSlicersDeps {
  storage: Storage;
  clock: Clock;
  ids: IdGenerator;
  config: Config;
  mode: DeploymentMode;
  /** Default: the simulated provisioner (PLAYLINE_SLICER_PROVISION_MS, PLAYLINE_SLICER_FAILURE_RATE). */
  provisioner?: SlicerProvisioner;
  log?: RunnerLog;
}

export interface ManagedSlicers {
  service: ManagedSlicerService;
  runner: SlicerTaskRunner;
  /** Starts the task runner (resuming interrupted tasks) and stops it gracefully. */
  work: BackgroundWork;
}

/** The lease owner name of this process: unique, and readable in the database. */
const leaseOwner = (ids: IdGenerator): string => `${hostname()}:${process.pid}:${ids.hex().slice(0, 8)}`;

/** Wires the managed-slicers module: repository, service, provisioner and task runner. */
export function createManagedSlicers(deps: ManagedSlicersDeps): ManagedSlicers {
  const { storage, clock, ids, config } = deps;
  const repository = new SlicerRepository(storage.db, storage.engine);
  const provisioner =
    deps.provisioner ??
    new SimulatedSlicerProvisioner({ clock, durationMs: config.slicerProvisionMs, failureRate: config.slicerFailureRate });
  const log = deps.log ?? moduleLogger('managed-slicers', config.logLevel);
  // Embedded mode: one process per database, so on start it takes back every interrupted
  // task at once, and only its own enqueues create work (no idle polling). Cluster mode: tasks
  // of a dead instance are taken over when their lease expires; idle runners poll.
  const embedded = deps.mode === 'embedded';
  const runner = new SlicerTaskRunner({
    store: repository,
    provisioner,
    clock,
    log,
    ownerId: leaseOwner(ids),
    exclusive: embedded,
    pollMs: embedded ? null : 1_000,
    leaseMs: config.slicerLeaseMs,
  });
  const service = new ManagedSlicerService({
    store: repository,
    clock,
    ids,
    regions: listSetting(config.regions),
    onTaskEnqueued: () => runner.claimNow(),
  });
  return {
    service,
    runner,
    work: { name: 'managed-slicer task runner', start: () => runner.start(), stop: () => runner.stop() },
  };
}
