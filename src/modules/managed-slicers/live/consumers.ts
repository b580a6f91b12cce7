import type { Clock } from '../../../platform/clock.js';
import { LiveIndexKeeper } from '../../../platform/media/live-index.js';
import { LiveStreamDescriber } from '../../../platform/media/live-stream-inf.js';
import type { ProcessRunner } from '../../../platform/media/media-process.js';
import type { OperationalEventSink } from '../../../platform/operational-events.js';
import { LiveRecorder, type RecordingSink } from '../live-recorder.js';
import type { LiveStatus } from '../live-status.js';
import type { RunnerLog } from '../task-runner.js';
import type { LiveConsumerFactory } from './live-event.js';

/** Webhooks: live.started and live.ended, one each per event (a drop-out within the reconnect grace is none). */
export const liveWebhooks = (events: OperationalEventSink): LiveConsumerFactory => ({ owner, slicerId }) => ({
  started: () => events.emit(owner, 'live.started', { slicer_id: slicerId, state: 'live' }),
  ended: (state) => events.emit(owner, 'live.ended', { slicer_id: slicerId, state }),
});

/**
 * ffmpeg's index.m3u8 names no variant for stream copy of a pushed HLS source: made playable for
 * every reader of the window (LiveIndexKeeper), checked on each progress of the encoder.
 */
export const windowIndexKeeper = (log: RunnerLog): LiveConsumerFactory => {
  const describer = new LiveStreamDescriber();
  return ({ slicerId, dir }) => {
    const keeper = new LiveIndexKeeper(dir, describer);
    let failed = false;
    return {
      progress: () => {
        keeper.check().then(
          () => (failed = false),
          (err: unknown) => {
            if (!failed) log.warn({ err, slicerId }, 'could not make the live window\'s index.m3u8 name its variant');
            failed = true;
          },
        );
      },
    };
  };
};

export interface RecordingConsumerDeps {
  mediaRoot: string;
  clock: Clock;
  ffmpeg: string;
  run: ProcessRunner;
  log: RunnerLog;
  /** The asset library (required: the root wires it; it answers whether it can take recordings now). */
  sink: RecordingSink;
  /** Whether the workspace's storage has room for more of a recording (its storage quota). */
  mayRecord: (owner: string) => Promise<boolean>;
  events: OperationalEventSink;
}

/**
 * Records each live event of a slicer with `record` into the asset library (LiveRecorder). Whether
 * the library can take it is asked when each event starts, not when the slicer starts: slicers
 * resumed at a server start run before the library has started (issue 36), and the library may
 * come or go while a slicer runs. A recording a killed server left is finished once the library
 * takes recordings (at the next event, or when the slicer stops here).
 */
export const liveRecording = (deps: RecordingConsumerDeps): LiveConsumerFactory => (event) => {
  if (event.config.record === false) return undefined;
  const { owner, slicerId } = event;
  const recorder = new LiveRecorder({
    mediaRoot: deps.mediaRoot, owner, slicerId, liveDir: event.dir, name: event.config.name, clock: deps.clock, sink: deps.sink,
    mayGrow: () => deps.mayRecord(owner), ffmpeg: deps.ffmpeg, run: deps.run, log: deps.log,
    onReady: (assetId, r) => {
      deps.events.emit(owner, 'asset.ready', { asset_id: assetId, duration_ms: r.durationMs, renditions: r.renditions.map((x) => x.name) });
      deps.events.emit(owner, 'recording.ready', { asset_id: assetId, slicer_id: slicerId, started_at: r.startedAt, ended_at: r.endedAt, duration_ms: r.durationMs });
    },
  });
  /** Why the event under way is not recorded (undefined: it is); null while no event is under way. */
  let decided: string | undefined | null = null;
  let recovered = false;
  const decide = (): string | undefined => {
    decided = deps.sink.unavailableReason();
    if (decided === undefined && !recovered) {
      recovered = true;
      // What a killed server (or an earlier run here) left is finished first: the recorder runs its work in order.
      void recorder.recoverLeftovers();
    }
    return decided;
  };
  return {
    started: () => void decide(),
    segment: (segment) => ((decided === null ? decide() : decided) === undefined ? recorder.segment(segment) : Promise.resolve()),
    ended: async () => {
      decided = null;
      await recorder.finish();
    },
    status: (): Pick<LiveStatus, 'recording'> => {
      const reason = decided === null ? deps.sink.unavailableReason() : decided;
      return { recording: reason === undefined ? recorder.status() : { state: 'unavailable', reason } };
    },
    close: async () => {
      // The event ends with the slicer here (stopped, restarted, deleted, taken over): its recording becomes an asset.
      if (!recovered && deps.sink.unavailableReason() === undefined) decide();
      decided = null;
      await recorder.finish();
    },
  };
};
