import type { Clock } from '../../platform/clock.js';
import type { ProcessRunner } from '../../platform/media/media-process.js';
import { SupervisedProcess, type RunEnd, type SupervisedState } from '../../platform/media/supervised-process.js';
import type { RestartSettings } from '../../platform/media/supervision-policy.js';
import type { LiveState, LiveStatus } from './live-status.js';
import type { SourceInput } from './listener-input.js';

export { liveStates, type LiveState, type LiveStatus } from './live-status.js';

export interface LiveProcessOptions {
  command: string;
  /** Arguments before the input (global options). */
  before: readonly string[];
  /**
   * How this run reads its source, once it can be read, or on abort (`again` when a run of this
   * process ended before): the keyed listener of SRT/RIST (a fresh named pipe per run), the
   * next RTMP publisher's FLV on stdin, or the pushed playlist (written anew after a run ended).
   */
  input: (signal: AbortSignal, again: boolean) => Promise<SourceInput>;
  /** Arguments after the input (the outputs; the last one names the process in its marker). */
  after: readonly string[];
  /** Working directory of the process. */
  cwd?: string;
  run: ProcessRunner;
  clock: Clock;
  restart: RestartSettings;
  /** Time without media, once some arrived, after which the source counts as gone (PLAYLINE_SLICER_STALL_MS). */
  stallMs: number;
  /** The marker file of the process (orphan clean-up), and the text of its command line that names it. */
  marker?: { file: string; tag: string; onError?: (err: unknown) => void };
  /** Called on each restart (metrics). */
  onRestart?: () => void;
  /** Called as each run ends (not at stop): logs. */
  onRunEnd?: (end: RunEnd) => void;
  /** Called each time the output advanced (about twice a second while live): the window's index keeper. */
  onProgress?: () => void;
  /** Called when the shown live state changes (operational events: live.started, live.ended). */
  onLiveStateChange?: (state: LiveState, previous: LiveState) => void;
  /**
   * Encoder drop-outs: for this long after a live source went away the state shows `reconnecting`
   * (the event goes on if media comes back), then `waiting_for_source` (PLAYLINE_LIVE_RECONNECT_GRACE_MS). 0: no grace.
   */
  reconnectGraceMs?: number;
}

const shown: Record<SupervisedState, LiveState> = {
  idle: 'provisioning',
  starting: 'waiting_for_source',
  running: 'live',
  // Only the stall rule ends a slicer's run: its source stopped sending.
  ending: 'waiting_for_source',
  backoff: 'restarting',
  stopping: 'stopped',
  stopped: 'stopped',
};

/**
 * One slicer's ffmpeg, as a configuration of the media supervisor: a listener. It waits for its
 * source as long as it takes (no first-progress deadline); a source that went away, or that
 * stopped sending for `stallMs`, is listened for again at once (an ffmpeg listener takes one
 * connection, and a half-open RTMP connection would otherwise hold it for good); a process that
 * ends without media (a crash, a refused input) is started again after the backoff. The input
 * bitrate is the first output's (`-c copy` to stdout, its bytes counted over the last seconds of output).
 */
export class LiveSlicerProcess {
  private readonly supervisor: SupervisedProcess;
  private ranBefore = false;
  private shownState: LiveState = 'provisioning';
  /** Clock ms the grace of a source that went away ends (undefined: no grace under way). */
  private graceUntil: number | undefined;
  private cancelGrace: (() => void) | undefined;
  private stopping = false;
  private readonly clock: Clock;
  private readonly graceMs: number;

  constructor(options: LiveProcessOptions) {
    const { before, after, cwd, marker } = options;
    this.clock = options.clock;
    this.graceMs = options.reconnectGraceMs ?? 0;
    const report = () => {
      const state = this.snapshot().state;
      if (state === this.shownState) return;
      const previous = this.shownState;
      this.shownState = state;
      options.onLiveStateChange?.(state, previous);
    };
    this.supervisor = new SupervisedProcess({
      command: options.command,
      run: options.run,
      clock: options.clock,
      policy: { ...options.restart, stallMs: options.stallMs, firstProgressDeadline: false, endAfterProgress: 'expected' },
      prepare: async (_end, signal) => {
        const input = await options.input(signal, this.ranBefore);
        return {
          args: [...before, ...input.args, ...after],
          // The first output (the source as received) is written to stdout and measured there.
          measure: 'stdout' as const,
          ...(input.stdin ? { stdin: input.stdin } : {}),
          ...(input.close ? { close: input.close } : {}),
          ...(cwd !== undefined ? { cwd } : {}),
          ...(marker ? { tag: marker.tag } : {}),
        };
      },
      ...(marker ? { marker: { file: marker.file, ...(marker.onError ? { onError: marker.onError } : {}) } } : {}),
      ...(options.onRestart ? { onRestart: options.onRestart } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      onRunEnd: (end) => {
        this.ranBefore = true;
        options.onRunEnd?.(end);
      },
      onStateChange: () => {
        const raw = this.rawState();
        if (raw === 'live' || this.stopping) this.endGrace();
        else if (this.shownState === 'live' && this.graceMs > 0 && (raw === 'waiting_for_source' || raw === 'restarting')) {
          // A live source went away: `reconnecting` until it is back or the grace ends.
          this.endGrace();
          this.graceUntil = this.clock.now() + this.graceMs;
          this.cancelGrace = this.clock.setTimer(() => {
            this.cancelGrace = undefined;
            this.graceUntil = undefined;
            report();
          }, this.graceMs);
        }
        report();
      },
    });
  }

  /**
   * The status now: `live` while media arrives; `reconnecting` within the grace after a live source
   * went away; `restarting` only while a failed process waits for its backoff.
   */
  snapshot(): LiveStatus {
    const { lastFailure, progress, restarts } = this.supervisor.status();
    const raw = this.rawState();
    const inGrace = this.graceUntil !== undefined && this.clock.now() < this.graceUntil && (raw === 'waiting_for_source' || raw === 'restarting');
    const live = inGrace ? 'reconnecting' : raw;
    return { state: live, failureReason: lastFailure, inputKbps: live === 'live' ? (progress?.kbps ?? null) : null, lastFrameAt: progress?.at ?? null, restarts };
  }

  private rawState(): LiveState {
    const { state, lastFailure } = this.supervisor.status();
    return shown[state] === 'restarting' && lastFailure === null ? 'waiting_for_source' : shown[state];
  }

  private endGrace(): void {
    this.cancelGrace?.();
    this.cancelGrace = undefined;
    this.graceUntil = undefined;
  }

  /** Whether a process of this slicer runs right now, and its pid. */
  running(): { pid: number | undefined; alive: boolean } {
    const { pid } = this.supervisor.status();
    return { pid, alive: pid !== undefined };
  }

  start(): void {
    this.supervisor.start();
  }

  /** Stops the process (SIGTERM, then SIGKILL after the grace) and the supervision; resolves once it is gone. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.endGrace();
    await this.supervisor.stop();
  }
}
