/**
 * The error catalogue: every error the API can answer with, by stable snake_case code.
 * Services throw AppError with one of these codes; one error handler renders problem+json.
 */
export const errorCatalogue = {
  // 400
  validation_failed: { status: 400, title: 'Request validation failed' },
  malformed_json: { status: 400, title: 'Malformed JSON body' },
  bad_request: { status: 400, title: 'Bad request' },
  bad_url: { status: 400, title: 'The request URL is not validly percent-encoded' },
  bad_content_length: { status: 400, title: 'The Content-Length header is not valid for this body' },
  parameter_conflict: { status: 400, title: 'A parameter has different values in the query string and in msg' },
  // 401
  missing_signature: { status: 401, title: 'Missing msg or sig' },
  malformed_msg: { status: 401, title: 'msg is not base64 zlib data' },
  msg_too_large: { status: 401, title: 'Inflated msg exceeds the size limit' },
  malformed_msg_json: { status: 401, title: 'msg does not hold a valid JSON credential' },
  unknown_owner: { status: 401, title: 'Unknown owner' },
  invalid_signature: { status: 401, title: 'Signature does not match' },
  key_revoked: { status: 401, title: 'The signing key has been revoked' },
  timestamp_out_of_range: { status: 401, title: 'Timestamp outside the accepted window' },
  invalid_admin_token: { status: 401, title: 'Missing or invalid admin token' },
  admin_api_disabled: { status: 401, title: 'The admin API is disabled' },
  // 403
  forbidden_workspace: { status: 403, title: 'Access to another workspace is forbidden' },
  key_kind_not_allowed: { status: 403, title: 'This key kind may not call this endpoint' },
  // 404
  route_not_found: { status: 404, title: 'No such route' },
  not_found: { status: 404, title: 'Resource not found' },
  // 408
  request_timeout: { status: 408, title: 'The request was not received in time' },
  // 409
  conflict: { status: 409, title: 'Conflict with the current state' },
  // 413, 414, 415, 422, 429, 431
  payload_too_large: { status: 413, title: 'Request body too large' },
  uri_too_long: { status: 414, title: 'A path segment of the URL is too long' },
  unsupported_media_type: { status: 415, title: 'Unsupported content type' },
  unprocessable: { status: 422, title: 'The request breaks a semantic rule' },
  throttled: { status: 429, title: 'Too many requests' },
  too_many_connections: { status: 429, title: 'Too many open connections from this client network' },
  headers_too_large: { status: 431, title: 'Request headers too large' },
  // quotas per workspace (the body names the quota, its limit and the usage)
  quota_exceeded: { status: 409, title: 'A quota of the workspace is reached' },
  storage_quota_exceeded: { status: 507, title: 'The workspace\'s storage quota is used up' },
  // 5xx
  internal_error: { status: 500, title: 'Internal server error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
  storage_full: { status: 503, title: 'Storage is full: the write was not made' },
  // managed-slicers
  task_transition_not_allowed: { status: 409, title: 'The slicer task cannot move to that state' },
  slicer_deletion_pending: { status: 409, title: 'The slicer is being deleted' },
  ingest_token_invalid: { status: 403, title: 'The token of the ingest URL does not match' },
  // error-reporting
  callback_test_failed: { status: 422, title: 'The callback URL did not answer the test POST with 200 within the timeout' },
  callback_url_refused: { status: 422, title: 'The callback URL resolves to an address callbacks may not reach' },
  callback_not_configured: { status: 422, title: 'No callback URL is configured for this workspace' },
  // playback-edge (the body's playback_error_code holds the playback error code 100-130 or 999)
  playback_url_invalid: { status: 400, title: 'The playback URL is malformed' },
  playback_forbidden: { status: 403, title: 'The playback URL is not authorised' },
  playback_not_found: { status: 404, title: 'No such playback content' },
  playback_session_reused: { status: 409, title: 'The playback session was already used' },
  playback_url_expired: { status: 410, title: 'The playback URL has expired' },
  playback_misconfigured: { status: 422, title: 'The content owner\'s playback configuration is broken' },
  playback_failed: { status: 500, title: 'The playback could not be prepared' },
  playback_ad_timeout: { status: 504, title: 'The ad decision server did not answer in time' },
  range_not_satisfiable: { status: 416, title: 'The requested byte range is not in the file' },
  // vod-stats
  stats_not_found: { status: 404, title: 'No statistics for this asset' },
  // syndication (publishing)
  publishing_unavailable: { status: 422, title: 'This target cannot be published to by this service' },
  content_not_live: { status: 409, title: 'The schedule\'s content is not live' },
  // assets
  media_tools_missing: { status: 503, title: 'ffmpeg and ffprobe are not available on this server' },
  media_volume_full: { status: 503, title: 'The media directory has no space left' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

/** One violation of a request rule, located by its JSON path (e.g. `/platform_config/port`). */
export interface FieldViolation {
  path: string;
  message: string;
}

export interface AppErrorOptions {
  errors?: FieldViolation[];
  cause?: unknown;
  /** Extra members merged into the problem body (e.g. what a callback test observed). */
  extra?: Record<string, unknown>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly errors: FieldViolation[] | undefined;
  readonly extra: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, detail?: string, options: AppErrorOptions = {}) {
    const entry = errorCatalogue[code];
    super(detail ?? entry.title, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = entry.status;
    this.title = entry.title;
    this.detail = detail ?? entry.title;
    this.errors = options.errors;
    this.extra = options.extra;
  }
}

export const isAppError = (value: unknown): value is AppError => value instanceof AppError;
