import type { Clock } from '../../platform/clock.js';
import type { FfmpegSlicerProvisioner, RunnableSlicer } from './ffmpeg-provisioner.js';
import type { ProvisionOutcome, ProvisionRequest, SlicerProvisioner } from './provisioner.js';
import type { SlicerHostRepository } from './slicer-hosts.repository.js';
import type { RunnableSlicerKey, SlicerRecord } from './slicer-store.js';
import type { RunnerLog } from './task-runner.js';

export interface SlicerHostingOptions {
  hosts: SlicerHostRepository;
  provisioner: FfmpegSlicerProvisioner;
  clock: Clock;
  log: RunnerLog;
  /** Names this instance in host leases (the task runner's lease owner). */
  owner: string;
  /** The slicer's stream key in clear (SlicerStreamKeys.keyOf): a slicer taken over demands it too. Undefined when gone. */
  streamKeyOf: (slicer: SlicerRecord) => Promise<string | undefined>;
  /** How long a host lease lasts unrenewed; renewed (and orphans looked for) every third of it. */
  leaseMs: number;
  /** Embedded mode: the only instance, so on start every slicer is its own to run. */
  exclusive: boolean;
  /** Slicers taken over per look (the rest at the next). Default 8. */
  takeOverBatch?: number;
}

/**
 * Runs each slicer's process on one instance: the one holding its host lease. Carrying out a
 * task of a slicer makes this instance its host; the lease is renewed with the process's status
 * while the process runs here. A host that finds its lease taken stops its process; a slicer
 * that should run and whose host stopped renewing (it died) is started here, and its ingest URL
 * then names this instance.
 */
export class SlicerHosting implements SlicerProvisioner {
  private cancelTimer: (() => void) | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: SlicerHostingOptions) {}

  create(request: ProvisionRequest): Promise<ProvisionOutcome> {
    return this.hosted(request, () => this.options.provisioner.create(request));
  }

  update(request: ProvisionRequest): Promise<ProvisionOutcome> {
    return this.hosted(request, () => this.options.provisioner.update(request));
  }

  restart(request: ProvisionRequest): Promise<ProvisionOutcome> {
    return this.hosted(request, () => this.options.provisioner.restart(request));
  }

  async delete(request: ProvisionRequest): Promise<ProvisionOutcome> {
    const outcome = await this.hosted(request, () => this.options.provisioner.delete(request));
    if (outcome.kind === 'succeeded') await this.options.hosts.release(request.slicerId, this.options.owner);
    return outcome;
  }

  /** Takes back (embedded) or looks for slicers to run, then keeps the leases. */
  async start(): Promise<void> {
    if (this.options.exclusive) await this.options.hosts.expireAll(this.options.clock.now());
    await this.tick();
    this.schedule();
  }

  /** Stops renewing and gives up every slicer run here (their processes are stopped by the provisioner). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer?.();
    await this.ticking;
    for (const id of this.options.provisioner.held()) await this.options.hosts.release(id, this.options.owner).catch(() => undefined);
  }

  /** One renewal and look for orphans now (tests; the timer does it every third of the lease). */
  async tick(): Promise<void> {
    this.ticking = this.renewAndTakeOver().catch((err: unknown) => this.options.log.error({ err }, 'slicer host leases could not be renewed; retrying'));
    await this.ticking;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.cancelTimer = this.options.clock.setTimer(() => {
      void this.tick().finally(() => this.schedule());
    }, Math.max(1, Math.floor(this.options.leaseMs / 3)));
  }

  private async hosted(request: ProvisionRequest, run: () => Promise<ProvisionOutcome>): Promise<ProvisionOutcome> {
    await this.options.hosts.take(request.slicerId, this.options.owner, this.options.clock.now() + this.options.leaseMs);
    return run();
  }

  private async renewAndTakeOver(): Promise<void> {
    const { hosts, provisioner, clock, owner, leaseMs, log } = this.options;
    for (const id of provisioner.held()) {
      const kept = await hosts.renew(id, owner, clock.now() + leaseMs, provisioner.status(id));
      if (!kept) {
        log.info({ slicerId: id }, 'slicer taken by another instance (or deleted): stopping its process here');
        await provisioner.letGo(id);
      }
    }
    if (this.stopped) return;
    const orphans = await hosts.orphans(clock.now(), this.options.takeOverBatch ?? 8);
    for (const slicer of orphans) {
      if (this.stopped) return;
      if (!(await hosts.takeOver(slicer.id, owner, clock.now(), clock.now() + leaseMs))) continue;
      const streamKey = await this.options.streamKeyOf(slicer);
      if (streamKey === undefined) continue;
      const runnable: RunnableSlicer & RunnableSlicerKey = { slicerId: slicer.id, owner: slicer.workspaceId, config: slicer.config, ingestUrl: slicer.ingestUrl, streamKey };
      const outcome = await provisioner.resume(runnable);
      if (outcome.kind === 'succeeded') {
        if (outcome.ingestUrl !== null && outcome.ingestUrl !== slicer.ingestUrl) await hosts.setIngestUrl(slicer.id, owner, outcome.ingestUrl);
        log.info({ slicerId: slicer.id, newIngestUrl: outcome.ingestUrl !== slicer.ingestUrl }, 'slicer runs here now');
      } else {
        log.warn({ slicerId: slicer.id, ...outcome }, 'slicer could not run here');
      }
      await hosts.renew(slicer.id, owner, clock.now() + leaseMs, provisioner.status(slicer.id));
    }
  }
}
