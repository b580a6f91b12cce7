import type { Clock } from '../../platform/clock.js';
import type { SlicerConfig, TaskOperation } from './managed-slicers.schema.js';

/** One piece of work for the provisioner: carry out `operation` so the slicer matches `config`. */
export interface ProvisionRequest {
  /** Idempotency key: the same task may be handed over again after a crash. */
  taskId: string;
  slicerId: string;
  workspaceId: string;
  operation: TaskOperation;
  /** The slicer's desired configuration as of the task's creation. */
  config: SlicerConfig;
  /**
   * The slicer's stream key in clear, as stored when the task runs (a rotation's RESTART gets the
   * new one): the ingest listener must refuse an encoder without it. Never log it, never put it
   * on a command line or into `ProvisionOutcome` (the returned ingest URL stays keyless).
   */
  streamKey: string;
  /** Aborted on graceful shutdown or when the runner loses the task's lease. */
  signal: AbortSignal;
}

export type ProvisionOutcome =
  | { kind: 'succeeded'; ingestUrl: string | null }
  | { kind: 'failed'; reason: string }
  | { kind: 'aborted' };

/**
 * Provisions managed slicers on some infrastructure. Every call must be idempotent per
 * `taskId` and converge the slicer to `config` (a resumed task repeats the call), and should
 * settle promptly with `aborted` once `signal` fires. Expected failures are returned as
 * `failed` with a reason the workspace owner may read; throwing means an internal error.
 */
export interface SlicerProvisioner {
  create(request: ProvisionRequest): Promise<ProvisionOutcome>;
  update(request: ProvisionRequest): Promise<ProvisionOutcome>;
  restart(request: ProvisionRequest): Promise<ProvisionOutcome>;
  delete(request: ProvisionRequest): Promise<ProvisionOutcome>;
}

/** Calls the provisioner method that carries out the request's operation. */
export function provision(provisioner: SlicerProvisioner, request: ProvisionRequest): Promise<ProvisionOutcome> {
  switch (request.operation) {
    case 'CREATE':
      return provisioner.create(request);
    case 'UPDATE':
      return provisioner.update(request);
    case 'RESTART':
      return provisioner.restart(request);
    case 'DELETE':
      return provisioner.delete(request);
  }
}

/** Source of uniformly distributed numbers in [0, 1). */
export interface RandomSource {
  next(): number;
}

export const mathRandom: RandomSource = { next: () => Math.random() };

/** Replays `values` in a loop (tests). */
export const cycleRandom = (values: readonly number[]): RandomSource => {
  let i = 0;
  return { next: () => values[i++ % values.length] ?? 0 };
};

export interface SimulatedProvisionerOptions {
  clock: Clock;
  /** How long each operation takes (PLAYLINE_SLICER_PROVISION_MS). */
  durationMs: number;
  /** Share of operations that fail, 0 to 1 (PLAYLINE_SLICER_FAILURE_RATE). */
  failureRate: number;
  random?: RandomSource;
  /** Domain of the simulated ingest endpoints. */
  ingestDomain?: string;
}

const failureReasons = [
  'no encoder capacity left in region {region}',
  'the slicer host in {region} did not answer its health check',
  'the {profile} output profile could not be applied',
];

/**
 * The default provisioner: no infrastructure, each operation takes `durationMs` of clock time
 * and fails at `failureRate`. Stateless, hence idempotent. Its ingest URLs are keyless like the
 * real ones (the view adds the stream key); it has no listener to check the key with.
 */
export class SimulatedSlicerProvisioner implements SlicerProvisioner {
  private readonly random: RandomSource;
  private readonly domain: string;

  constructor(private readonly options: SimulatedProvisionerOptions) {
    this.random = options.random ?? mathRandom;
    this.domain = options.ingestDomain ?? 'ingest.playline.invalid';
  }

  create(request: ProvisionRequest): Promise<ProvisionOutcome> {
    return this.simulate(request, () => this.ingestUrl(request));
  }

  update(request: ProvisionRequest): Promise<ProvisionOutcome> {
    return this.simulate(request, () => this.ingestUrl(request));
  }

  restart(request: ProvisionRequest): Promise<ProvisionOutcome> {
    return this.simulate(request, () => this.ingestUrl(request));
  }

  delete(request: ProvisionRequest): Promise<ProvisionOutcome> {
    return this.simulate(request, () => null);
  }

  private simulate(request: ProvisionRequest, ingestUrl: () => string | null): Promise<ProvisionOutcome> {
    if (request.signal.aborted) return Promise.resolve({ kind: 'aborted' });
    return new Promise((resolve) => {
      const onAbort = () => {
        cancel();
        resolve({ kind: 'aborted' });
      };
      const cancel = this.options.clock.setTimer(() => {
        request.signal.removeEventListener('abort', onAbort);
        resolve(this.outcome(request, ingestUrl));
      }, this.options.durationMs);
      request.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private outcome(request: ProvisionRequest, ingestUrl: () => string | null): ProvisionOutcome {
    if (this.random.next() >= this.options.failureRate) return { kind: 'succeeded', ingestUrl: ingestUrl() };
    const pick = Math.min(failureReasons.length - 1, Math.floor(this.random.next() * failureReasons.length));
    const reason = (failureReasons[pick] ?? 'simulated failure')
      .replace('{region}', request.config.region)
      .replace('{profile}', request.config.output_profile);
    return { kind: 'failed', reason: `${request.operation} failed (simulated): ${reason}` };
  }

  private ingestUrl({ slicerId, workspaceId, config }: ProvisionRequest): string {
    const host = `${config.region}.${this.domain}`;
    switch (config.ingest_protocol) {
      case 'rtmp':
        return `rtmp://${host}:1935/live`;
      case 'srt':
        return `srt://${host}:9000`;
      case 'rist':
        // RIST takes an even port; the next odd one carries error correction.
        return `rist://${host}:9100`;
      case 'zixi':
        return `zixi://${host}:2088/${slicerId}`;
      case 'hls':
        return `https://${host}/ingest/hls/${workspaceId}/${slicerId}`;
    }
  }
}
