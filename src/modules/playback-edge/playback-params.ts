import { failure, type PlaybackFailure } from './playback-failure.js';

/** The optional playback parameters, checked for form (not yet against the content). */
export interface PlaybackOptions {
  /** `dur`: longest playback in seconds. */
  durationS?: number;
  /** `ts`: Unix seconds where a live event's timeline starts. */
  startTs?: number;
  /** `delay`: seconds behind the live edge. */
  delayS?: number;
  /** `minDur`: shortest final segment in seconds (a shorter remainder is dropped). */
  minSegmentS?: number;
  /** `targetDur`: segment duration in seconds (EXT-X-TARGETDURATION). */
  targetDurationS?: number;
  /** `stopOffset`: seconds cut from the end of the asset. */
  stopOffsetS?: number;
  /** `sliceStart` / `sliceStop`: the part of the asset to play, in seconds. */
  sliceStartS?: number;
  sliceStopS?: number;
  /** `startseg`: index of the first segment (EXT-X-MEDIA-SEQUENCE). */
  startSegment?: number;
  /** `pbs`: the playback session id, single use. */
  session?: string;
  /** `hlsver`: EXT-X-VERSION. */
  hlsVersion?: number;
  /** `kv`: version of the application key named by `kid`. */
  keyVersion?: number;
}

export const MIN_HLS_VERSION = 3;
export const MAX_HLS_VERSION = 7;
export const MAX_TARGET_DURATION_S = 30;
const MAX_SECONDS = 366 * 86400;

const INTEGER = /^\d{1,10}$/;
const CLOCK = /^(?:(\d{1,3}):)?([0-5]?\d):([0-5]\d)$/;
/** The form of a playback session id (`pbs`). */
export const SESSION_ID = /^[A-Za-z0-9_-]{8,64}$/;

/**
 * The one rule naming the session of a playback request, valid or refused: the URL's `pbs`,
 * else the player's CMCD `sid`, each only when well formed; undefined means a new id for this
 * request. A refusal must be the same session a valid playback of that request would have been,
 * so that refusals sharing a `pbs` or a `sid` count as one session everywhere (the statistics
 * dedupe per asset, session and error code, in the library or not).
 */
export const playbackSessionOf = (pbs: string | undefined, cmcdSid: string | undefined): string | undefined => {
  if (pbs !== undefined && SESSION_ID.test(pbs)) return pbs;
  return cmcdSid !== undefined && SESSION_ID.test(cmcdSid) ? cmcdSid : undefined;
};

const integerIn = (value: string, min: number, max: number): number | undefined => {
  if (!INTEGER.test(value)) return undefined;
  const n = Number(value);
  return n >= min && n <= max ? n : undefined;
};

/** `dur`: whole seconds (`90`) or a clock form (`1:30`, `01:02:03`), more than zero. */
export const parseDuration = (value: string): number | undefined => {
  const seconds = integerIn(value, 1, MAX_SECONDS);
  if (seconds !== undefined) return seconds;
  const m = CLOCK.exec(value);
  if (!m) return undefined;
  const total = Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]);
  return total > 0 ? total : undefined;
};

type Check = (value: string, out: PlaybackOptions) => PlaybackFailure | undefined;

const bad = (code: number, message: string) => failure(code, 400, message);

/** One rule per optional parameter, in the order the edge applies them. */
const checks: ReadonlyArray<readonly [string, Check]> = [
  ['dur', (v, o) => ((o.durationS = parseDuration(v)) === undefined ? bad(100, 'dur must be seconds (90) or h:mm:ss, more than 0') : undefined)],
  ['ts', (v, o) => ((o.startTs = integerIn(v, 0, 4_102_444_800)) === undefined ? bad(115, 'ts must be Unix seconds') : undefined)],
  ['delay', (v, o) => ((o.delayS = integerIn(v, 0, 86400)) === undefined ? bad(116, 'delay must be whole seconds from 0 to 86400') : undefined)],
  ['minDur', (v, o) => ((o.minSegmentS = integerIn(v, 1, MAX_TARGET_DURATION_S)) === undefined ? bad(117, `minDur must be whole seconds from 1 to ${MAX_TARGET_DURATION_S}`) : undefined)],
  ['targetDur', (v, o) => ((o.targetDurationS = integerIn(v, 1, MAX_TARGET_DURATION_S)) === undefined ? bad(118, `targetDur must be whole seconds from 1 to ${MAX_TARGET_DURATION_S}`) : undefined)],
  ['stopOffset', (v, o) => ((o.stopOffsetS = integerIn(v, 0, MAX_SECONDS)) === undefined ? bad(123, 'stopOffset must be whole seconds') : undefined)],
  ['sliceStart', (v, o) => ((o.sliceStartS = integerIn(v, 0, MAX_SECONDS)) === undefined ? bad(124, 'sliceStart must be whole seconds') : undefined)],
  ['sliceStop', (v, o) => ((o.sliceStopS = integerIn(v, 1, MAX_SECONDS)) === undefined ? bad(125, 'sliceStop must be whole seconds, more than 0') : undefined)],
  ['startseg', (v, o) => ((o.startSegment = integerIn(v, 0, 10_000_000)) === undefined ? bad(126, 'startseg must be a segment index (0 or more)') : undefined)],
  ['pbs', (v, o) => (SESSION_ID.test(v) ? ((o.session = v), undefined) : bad(128, 'pbs must be 8-64 characters of A-Z a-z 0-9 _ -'))],
  ['hlsver', (v, o) => ((o.hlsVersion = integerIn(v, MIN_HLS_VERSION, MAX_HLS_VERSION)) === undefined ? bad(129, `hlsver should be an integer from ${MIN_HLS_VERSION} to ${MAX_HLS_VERSION}`) : undefined)],
  ['kv', (v, o) => ((o.keyVersion = integerIn(v, 1, 1_000_000)) === undefined ? failure(120, 403, 'kv must be a key version number') : undefined)],
];

/** Checks the form of every optional parameter present; the first bad one wins. */
export function parsePlaybackOptions(params: ReadonlyMap<string, string>): PlaybackOptions | PlaybackFailure {
  const out: PlaybackOptions = {};
  for (const [name, check] of checks) {
    const value = params.get(name);
    if (value === undefined) continue;
    const problem = check(value, out);
    if (problem) return problem;
  }
  return out;
}
