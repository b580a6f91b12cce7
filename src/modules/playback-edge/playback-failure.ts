import type { ErrorCode } from '../../platform/errors.js';

/** HTTP statuses a refused playback answers with, one per kind of cause. */
export type PlaybackHttpStatus = 400 | 403 | 404 | 409 | 410 | 422 | 500 | 504;

/**
 * Why a playback URL was refused: the playback error code (100–130, 999) counted in
 * `stats.errors`, the HTTP status of the answer (the Error Report's `code`) and a short message.
 * `owner` is set when the URL can be linked to a workspace (only then are events and reports made).
 */
export class PlaybackFailure {
  constructor(
    readonly errorCode: number,
    readonly httpStatus: PlaybackHttpStatus,
    readonly message: string,
  ) {}
}

export const failure = (errorCode: number, httpStatus: PlaybackHttpStatus, message: string) =>
  new PlaybackFailure(errorCode, httpStatus, message);

/** The error catalogue code (problem+json `code`) for each status a playback can be refused with. */
export const problemCodeOf: Record<PlaybackHttpStatus, ErrorCode> = {
  400: 'playback_url_invalid',
  403: 'playback_forbidden',
  404: 'playback_not_found',
  409: 'playback_session_reused',
  410: 'playback_url_expired',
  422: 'playback_misconfigured',
  500: 'playback_failed',
  504: 'playback_ad_timeout',
};
