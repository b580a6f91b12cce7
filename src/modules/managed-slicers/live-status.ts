/** What a running slicer is doing, as the slicer resource shows it. */
export const liveStates = ['provisioning', 'waiting_for_source', 'live', 'restarting', 'failed', 'stopped'] as const;
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
}
