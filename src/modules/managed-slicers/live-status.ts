/** What a running slicer is doing, as the slicer resource shows it. */
export const liveStates = ['provisioning', 'waiting_for_source', 'live', 'reconnecting', 'restarting', 'failed', 'stopped'] as const;
export type LiveState = (typeof liveStates)[number];

export interface LiveStatus {
  state: LiveState;
  /** Why the process last ended unexpectedly (kept while it restarts), or why it could not start. */
  failureReason: string | null;
  /** The source's bitrate over the last progress interval, from ffmpeg's `-progress` output. */
  inputKbps: number | null;
  /** Clock ms of the last progress report that showed new media. */
  lastFrameAt: number | null;
  /** Times the process was started again after it ended (source gone, crash). */
  restarts: number;
  /** Recording of the event into the library (slicers with `record`); undefined when off. */
  recording?: { state: 'idle' | 'recording' | 'stopped' | 'unavailable'; reason: string | null };
}

/**
 * The operational event a change of the shown live state makes, following events rather than
 * runs: `live.started` when media arrives from no event, `live.ended` when the event ends (the
 * source went away and its reconnect grace passed, or the slicer stopped); a drop-out that comes
 * back within the grace (live > reconnecting > live) makes none.
 */
export function liveEventOf(state: LiveState, previous: LiveState): 'live.started' | 'live.ended' | undefined {
  if (state === 'live' && previous !== 'reconnecting') return 'live.started';
  if ((previous === 'live' || previous === 'reconnecting') && state !== 'live' && state !== 'reconnecting') return 'live.ended';
  return undefined;
}
