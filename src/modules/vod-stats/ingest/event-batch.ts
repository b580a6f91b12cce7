import { AppError } from '../../../platform/errors.js';
import {
  MAX_DURATION_MS,
  MAX_EVENT_LINE_BYTES,
  MAX_ID_LENGTH,
  MAX_TEXT_LENGTH,
  UNKNOWN_ERROR_CODE,
  isKnownErrorCode,
} from '../events.schema.js';
import type { EventRejection, PlaybackEvent, PlaybackEventType } from '../events.schema.js';
import { RETENTION_MS } from '../stats-window.js';

export type EventBatchKind = 'ndjson' | 'json';

export interface EventBatchContext {
  /** The authenticated workspace; every event's owner must equal it unless `anyOwner`. */
  authOwner: string;
  /** True for ingest keys, which submit events for any workspace (playback servers). */
  anyOwner: boolean;
  /** Receipt time (Unix ms): the default `ts`, and the upper bound later timestamps are clamped to. */
  now: number;
}

export interface ParsedEventBatch {
  events: PlaybackEvent[];
  rejected: EventRejection[];
}

/** A reason to reject one event; only allocated on the error path. */
class Rejection {
  constructor(
    readonly code: string,
    readonly detail: string,
  ) {}
}

/**
 * A UTF-16 line of at most this many code units cannot exceed the byte limit in UTF-8
 * (3 bytes per unit at most), so only longer lines pay for an exact byte count.
 */
const SAFE_LINE_CHARS = Math.floor(MAX_EVENT_LINE_BYTES / 3);

const idRejection = (field: string) =>
  new Rejection('invalid_field', `${field} must be a non-empty string of at most ${MAX_ID_LENGTH} characters`);
const textRejection = (field: string) =>
  new Rejection('invalid_field', `${field} must be a string of at most ${MAX_TEXT_LENGTH} characters`);

const isId = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH;

const optionalText = (value: unknown): string | undefined | Rejection => {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' && value.length <= MAX_TEXT_LENGTH ? value : new Rejection('', '');
};

/**
 * Checks and normalises one decoded event with straight-line checks (this is the ingest hot
 * path: no generic validator per event). The decoded object itself becomes the event: `ts` is
 * set, nulls of known fields become undefined, `type` is replaced by a constant (interned) string.
 * Unknown members stay on it and are ignored.
 */
const toEvent = (value: unknown, ctx: EventBatchContext): PlaybackEvent | Rejection => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return new Rejection('not_an_object', 'an event must be a JSON object');
  }
  const o = value as Record<string, unknown>;
  const rawType = o['type'];
  let type: PlaybackEventType;
  if (rawType === 'request') type = 'request';
  else if (rawType === 'start') type = 'start';
  else if (rawType === 'manifest') type = 'manifest';
  else if (rawType === 'ad') type = 'ad';
  else if (rawType === 'error') type = 'error';
  else if (rawType === 'rebuffer') type = 'rebuffer';
  else return new Rejection('invalid_field', 'type must be one of request, manifest, ad, start, error, rebuffer');

  const owner = o['owner'];
  if (!isId(owner)) return idRejection('owner');
  if (!ctx.anyOwner && owner !== ctx.authOwner) {
    return new Rejection('owner_mismatch', 'owner must be the authenticated workspace');
  }
  const assetId = o['asset_id'];
  if (!isId(assetId)) return idRejection('asset_id');
  const sessionId = o['session_id'];
  if (!isId(sessionId)) return idRejection('session_id');

  const rawTs = o['ts'];
  let ts = ctx.now;
  if (rawTs !== undefined && rawTs !== null) {
    if (typeof rawTs !== 'number' || !Number.isSafeInteger(rawTs) || rawTs < 0) {
      return new Rejection('invalid_field', 'ts must be a non-negative integer of Unix milliseconds');
    }
    if (rawTs < ctx.now - RETENTION_MS) {
      return new Rejection('ts_out_of_range', 'ts is more than 24 hours old: it could never be served');
    }
    // A clock running ahead must not anchor windows in the future: clamp to receipt time.
    if (rawTs < ctx.now) ts = rawTs;
  }

  const rawLatency = o['latency_ms'];
  let latency: number | undefined;
  if (rawLatency !== undefined && rawLatency !== null) {
    if (type !== 'manifest' && type !== 'ad') {
      return new Rejection('invalid_field', 'latency_ms is only allowed on manifest and ad events');
    }
    if (typeof rawLatency !== 'number' || !(rawLatency >= 0) || rawLatency === Infinity) {
      return new Rejection('invalid_field', 'latency_ms must be a finite number >= 0');
    }
    latency = rawLatency;
  }

  const rawStartup = o['startup_ms'];
  let startup: number | undefined;
  if (rawStartup !== undefined && rawStartup !== null) {
    if (type !== 'start') return new Rejection('invalid_field', 'startup_ms is only allowed on start events');
    if (typeof rawStartup !== 'number' || !(rawStartup >= 0 && rawStartup <= MAX_DURATION_MS)) {
      return new Rejection('invalid_field', `startup_ms must be a number from 0 to ${MAX_DURATION_MS}`);
    }
    startup = rawStartup;
  }
  const rawScope = o['workspace_only'];
  if (rawScope !== undefined && rawScope !== null && typeof rawScope !== 'boolean') {
    return new Rejection('invalid_field', 'workspace_only must be a boolean');
  }

  const rawCode = o['error_code'];
  let errorCode: number | undefined;
  let httpStatus: number | undefined;
  let url: string | undefined;
  let ip: string | undefined;
  let ua: string | undefined;
  let msg: string | undefined;
  if (type === 'error') {
    if (rawCode === undefined || rawCode === null) errorCode = UNKNOWN_ERROR_CODE;
    else if (typeof rawCode !== 'number' || !Number.isSafeInteger(rawCode)) {
      return new Rejection('invalid_field', 'error_code must be an integer');
    } else errorCode = isKnownErrorCode(rawCode) ? rawCode : UNKNOWN_ERROR_CODE;
    const status = o['http_status'];
    if (status !== undefined && status !== null) {
      if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) {
        return new Rejection('invalid_field', 'http_status must be an integer from 100 to 599');
      }
      httpStatus = status;
    }
    const u = optionalText(o['url']);
    if (u instanceof Rejection) return textRejection('url');
    const i = optionalText(o['ip']);
    if (i instanceof Rejection) return textRejection('ip');
    const a = optionalText(o['ua']);
    if (a instanceof Rejection) return textRejection('ua');
    const m = optionalText(o['msg']);
    if (m instanceof Rejection) return textRejection('msg');
    url = u;
    ip = i;
    ua = a;
    msg = m;
  } else if (rawCode !== undefined && rawCode !== null) {
    return new Rejection('invalid_field', 'error_code is only allowed on error events');
  }

  // The decoded object becomes the event (no copy on the hot path): normalise it in place.
  const event = o as PlaybackEvent & Record<string, unknown>;
  event.type = type;
  event.ts = ts;
  if (latency === undefined && rawLatency !== undefined) event.latency_ms = undefined;
  if (startup === undefined && rawStartup !== undefined) event.startup_ms = undefined;
  if (rawScope !== true && rawScope !== undefined) event.workspace_only = undefined;
  if (type === 'error') {
    event.error_code = errorCode;
    event.http_status = httpStatus;
    event.url = url;
    event.ip = ip;
    event.ua = ua;
    event.msg = msg;
  }
  return event;
};

const reject = (out: ParsedEventBatch, index: number, rejection: Rejection): void => {
  out.rejected.push({ index, code: rejection.code, detail: rejection.detail });
};

const parseNdjson = (text: string, ctx: EventBatchContext, out: ParsedEventBatch): void => {
  const length = text.length;
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (let index = 0; start < length; index++) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = length;
    const chars = end - start;
    if (chars > SAFE_LINE_CHARS && Buffer.byteLength(text.slice(start, end)) > MAX_EVENT_LINE_BYTES) {
      reject(out, index, new Rejection('line_too_long', `a line may hold at most ${MAX_EVENT_LINE_BYTES} bytes`));
    } else if (chars > 0 && !(chars === 1 && text.charCodeAt(start) === 13)) {
      const line = text.slice(start, end);
      let value: unknown;
      let decoded = true;
      try {
        value = JSON.parse(line);
      } catch {
        decoded = false;
      }
      if (!decoded) {
        if (line.trim() !== '') reject(out, index, new Rejection('malformed_json', 'the line is not valid JSON'));
      } else {
        const event = toEvent(value, ctx);
        if (event instanceof Rejection) reject(out, index, event);
        else out.events.push(event);
      }
    }
    start = end + 1;
  }
};

const parseJsonArray = (text: string, ctx: EventBatchContext, out: ParsedEventBatch): void => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError('malformed_json', 'The body is not valid JSON');
  }
  if (!Array.isArray(value)) {
    throw new AppError('validation_failed', 'The body must be a JSON array of events', {
      errors: [{ path: '', message: 'must be an array' }],
    });
  }
  for (let index = 0; index < value.length; index++) {
    const event = toEvent(value[index], ctx);
    if (event instanceof Rejection) reject(out, index, event);
    else out.events.push(event);
  }
};

/**
 * Decodes and validates a batch of playback events with partial acceptance: good events are
 * returned even when others are bad; each bad one is reported by index with a reason.
 * NDJSON: index = 0-based line number, blank lines are skipped. JSON: the body must be an
 * array (else the whole batch is a 400), index = array position.
 */
export const parseEventBatch = (
  body: Buffer | string,
  kind: EventBatchKind,
  ctx: EventBatchContext,
): ParsedEventBatch => {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  const out: ParsedEventBatch = { events: [], rejected: [] };
  if (kind === 'ndjson') parseNdjson(text, ctx, out);
  else parseJsonArray(text, ctx, out);
  return out;
};
