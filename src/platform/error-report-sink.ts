/**
 * A playback error that can be linked to an owner, on its way to that owner's Error Reporting
 * callback. Statistics ingest and the playback edge submit; the callback dispatcher delivers.
 */
export interface PlaybackErrorReport {
  owner: string;
  /** Playback URL that triggered the error. */
  url: string;
  ip: string;
  /** HTTP status of the failed playback request (the report's `code`). */
  code: number;
  ua: string;
  msg: string;
  /** Unix seconds. */
  timestamp: number;
  /** Playback error code 100–130 or 999 (the report's `error_code`; also counted). */
  errorCode: number;
}

/** Where error reports go. `submit` is synchronous and never waits for delivery. */
export interface ErrorReportSink {
  submit(report: PlaybackErrorReport): void;
}
