import { MAX_ID_LENGTH, MAX_LATENCY_MS, MAX_TEXT_LENGTH, UNKNOWN_ERROR_CODE, isKnownErrorCode } from '../events.schema.js';
import type { PlaybackEvent, PlaybackEventType } from '../events.schema.js';
import { RETENTION_MS } from '../stats-window.js';

/** What the checks of one batch's events depend on: fixed at receipt, recorded in the journal. */
export interface EventBatchContext {
  /** Receipt time (Unix ms): the default `ts`, and the upper bound later timestamps are clamped to. */
  now: number;
  /**
   * The workspaces this batch may carry events of (an AllowedOwners, or any set); null: any (the
   * playback edge, and version-1 journal records of ingest keys). An API key's batch: its own
   * workspace only.
   */
  owners: { has(owner: string): boolean } | null;
  /** Why an event of another workspace is refused: `owner_mismatch` (API key) or `owner_not_allowed` (ingest key). */
  foreignOwnerCode: 'owner_mismatch' | 'owner_not_allowed';
}

/**
 * The workspaces one batch may name. Its events mostly name one workspace, so the last one
 * allowed is compared first (a string compare, not a hash of a freshly decoded string).
 */
export class AllowedOwners {
  private last: string | undefined;

  constructor(private readonly owners: ReadonlySet<string>) {}

  has(owner: string): boolean {
    if (owner === this.last) return true;
    if (!this.owners.has(owner)) return false;
    this.last = owner;
    return true;
  }
}

/** A reason to reject one event; only allocated on the error path. */
export class Rejection {
  constructor(
    readonly code: string,
    readonly detail: string,
    /** The event's owner when it was refused as another workspace's (ingest keys tell unknown ones apart). */
    readonly owner?: string,
  ) {}
}

/**
 * The shortest text a valid event can have: every required member with the shortest value.
 * Anything shorter is rejected without being decoded (junk costs no JSON.parse).
 */
export const MIN_EVENT_CHARS = JSON.stringify({ type: 'ad', owner: 'o', asset_id: 'a', session_id: 's' }).length;

const idRejection = (field: string) =>
  new Rejection('invalid_field', `${field} must be a non-empty string of at most ${MAX_ID_LENGTH} characters`);
const textRejection = (field: string) =>
  new Rejection('invalid_field', `${field} must be a string of at most ${MAX_TEXT_LENGTH} characters`);
const NOT_AN_OBJECT = new Rejection('not_an_object', 'an event must be a JSON object');
const BAD_TYPE = new Rejection('invalid_field', 'type must be one of request, manifest, ad, start, error, rebuffer');
const BAD_TS = new Rejection('invalid_field', 'ts must be a non-negative integer of Unix milliseconds');
const OLD_TS = new Rejection('ts_out_of_range', 'ts is more than 24 hours old: it could never be served');
const LATENCY_KIND = new Rejection('invalid_field', 'latency_ms is only allowed on manifest and ad events');
const BAD_LATENCY = new Rejection('invalid_field', `latency_ms must be a finite number from 0 to ${MAX_LATENCY_MS}`);
const STARTUP_KIND = new Rejection('invalid_field', 'startup_ms is only allowed on start events');
const BAD_STARTUP = new Rejection('invalid_field', `startup_ms must be a finite number from 0 to ${MAX_LATENCY_MS}`);
const BAD_SCOPE = new Rejection('invalid_field', 'workspace_only must be a boolean');
const BAD_CODE = new Rejection('invalid_field', 'error_code must be an integer');
const CODE_KIND = new Rejection('invalid_field', 'error_code is only allowed on error events');
const BAD_STATUS = new Rejection('invalid_field', 'http_status must be an integer from 100 to 599');
const foreignOwner = (code: EventBatchContext['foreignOwnerCode'], owner: string) =>
  new Rejection(
    code,
    code === 'owner_mismatch' ? 'owner must be the authenticated workspace' : 'this ingest key may not submit events for that workspace',
    owner,
  );

const isId = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH;

const INVALID_TEXT = Symbol('invalid text');
const optionalText = (value: unknown): string | undefined | typeof INVALID_TEXT => {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' && value.length <= MAX_TEXT_LENGTH ? value : INVALID_TEXT;
};

/**
 * Checks one decoded value with straight-line checks (the ingest hot path: no generic
 * validator per event) and returns a new event holding the known fields only, always in the
 * same shape: unknown members are dropped, so what a batch keeps in memory is bounded by its
 * known fields whatever else a line carried. `ts` is set, nulls become undefined, `type` is an
 * interned constant, a missing or unknown error code is 999.
 */
export const toEvent = (value: unknown, ctx: EventBatchContext): PlaybackEvent | Rejection => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return NOT_AN_OBJECT;
  const o = value as Record<string, unknown>;
  const rawType = o['type'];
  let type: PlaybackEventType;
  if (rawType === 'request') type = 'request';
  else if (rawType === 'start') type = 'start';
  else if (rawType === 'manifest') type = 'manifest';
  else if (rawType === 'ad') type = 'ad';
  else if (rawType === 'error') type = 'error';
  else if (rawType === 'rebuffer') type = 'rebuffer';
  else return BAD_TYPE;

  const owner = o['owner'];
  if (!isId(owner)) return idRejection('owner');
  if (ctx.owners !== null && !ctx.owners.has(owner)) return foreignOwner(ctx.foreignOwnerCode, owner);
  const assetId = o['asset_id'];
  if (!isId(assetId)) return idRejection('asset_id');
  const sessionId = o['session_id'];
  if (!isId(sessionId)) return idRejection('session_id');

  const rawTs = o['ts'];
  let ts = ctx.now;
  if (rawTs !== undefined && rawTs !== null) {
    if (typeof rawTs !== 'number' || !Number.isSafeInteger(rawTs) || rawTs < 0) return BAD_TS;
    if (rawTs < ctx.now - RETENTION_MS) return OLD_TS;
    // A clock running ahead must not anchor windows in the future: clamp to receipt time.
    if (rawTs < ctx.now) ts = rawTs;
  }

  const rawLatency = o['latency_ms'];
  let latency: number | undefined;
  if (rawLatency !== undefined && rawLatency !== null) {
    if (type !== 'manifest' && type !== 'ad') return LATENCY_KIND;
    // Bounded, so no sum of latencies a store keeps can overflow to Infinity.
    if (typeof rawLatency !== 'number' || !(rawLatency >= 0 && rawLatency <= MAX_LATENCY_MS)) return BAD_LATENCY;
    latency = rawLatency;
  }

  const rawStartup = o['startup_ms'];
  let startup: number | undefined;
  if (rawStartup !== undefined && rawStartup !== null) {
    if (type !== 'start') return STARTUP_KIND;
    if (typeof rawStartup !== 'number' || !(rawStartup >= 0 && rawStartup <= MAX_LATENCY_MS)) return BAD_STARTUP;
    startup = rawStartup;
  }
  const rawScope = o['workspace_only'];
  if (rawScope !== undefined && rawScope !== null && typeof rawScope !== 'boolean') return BAD_SCOPE;
  const workspaceOnly = rawScope === true ? true : undefined;

  const rawCode = o['error_code'];
  if (type !== 'error') {
    if (rawCode !== undefined && rawCode !== null) return CODE_KIND;
    return { type, owner, asset_id: assetId, session_id: sessionId, ts, latency_ms: latency, error_code: undefined, http_status: undefined, url: undefined, ip: undefined, ua: undefined, msg: undefined, startup_ms: startup, workspace_only: workspaceOnly };
  }
  let errorCode: number;
  if (rawCode === undefined || rawCode === null) errorCode = UNKNOWN_ERROR_CODE;
  else if (typeof rawCode !== 'number' || !Number.isSafeInteger(rawCode)) return BAD_CODE;
  else errorCode = isKnownErrorCode(rawCode) ? rawCode : UNKNOWN_ERROR_CODE;
  const status = o['http_status'];
  let httpStatus: number | undefined;
  if (status !== undefined && status !== null) {
    if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) return BAD_STATUS;
    httpStatus = status;
  }
  const url = optionalText(o['url']);
  if (url === INVALID_TEXT) return textRejection('url');
  const ip = optionalText(o['ip']);
  if (ip === INVALID_TEXT) return textRejection('ip');
  const ua = optionalText(o['ua']);
  if (ua === INVALID_TEXT) return textRejection('ua');
  const msg = optionalText(o['msg']);
  if (msg === INVALID_TEXT) return textRejection('msg');
  return { type, owner, asset_id: assetId, session_id: sessionId, ts, latency_ms: undefined, error_code: errorCode, http_status: httpStatus, url, ip, ua, msg, startup_ms: undefined, workspace_only: workspaceOnly };
};
