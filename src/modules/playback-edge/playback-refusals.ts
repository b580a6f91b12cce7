import type { IdGenerator } from '../../platform/ids.js';
import type { EdgeEvent } from './edge-events.js';
import type { MediaLibrary } from './media-library.js';
import { mayPlayAcross, type PlaybackDirectory } from './playback-catalog.js';
import type { PlaybackEventSink } from './playback-events.js';
import type { PlaybackFailure } from './playback-failure.js';

/** Whether one more refusal may be answered as such (counted in statistics, reported), or must be a 429. */
export type RefusalAdmission = { admitted: true } | { admitted: false; retryAfterS: number };

/** Asks, for one request's client address, whether its next refusal is admitted (and counts it). */
export type RefusalGate = () => Promise<RefusalAdmission>;

export const ADMITTED: RefusalAdmission = { admitted: true };

/** What the error event and the Error Report say about the viewer. */
export interface ViewerCall {
  /** The full URL as requested (the report's `url`). */
  url: string;
  clientIp: string;
  userAgent: string;
  /** Asked before a refusal the client caused (4xx) is answered: the per-address limit. Default: always admitted. */
  refusalGate?: RefusalGate;
}

export interface Refusal {
  failure: PlaybackFailure;
  call: ViewerCall;
  /** A workspace known to exist (from a verified URL or session token). */
  owner?: string;
  /** Else: the workspace the request names, linked only when it exists. */
  claimedOwner?: string | undefined;
  /** The workspace whose library would hold the asset (`coid`); default: the owner. */
  library?: string | undefined;
  assetId: string;
  /** The session when known (a token's, or playbackSessionOf: a well-formed `pbs`, else CMCD `sid`); else a new id per request. */
  session?: string | undefined;
  /** A playback request counts a `request` as well; a session's later requests only their `error`. */
  countsRequest: boolean;
  ts: number;
}

export interface RefusalOutcome {
  /** The workspace events and the report went to; null when none could be linked or the refusal was throttled. */
  owner: string | null;
  /** Set when the client is over its refusal limit: answer 429, nothing was emitted. */
  throttled?: { retryAfterS: number };
}

export interface RefusalDeps {
  ids: IdGenerator;
  directory: PlaybackDirectory;
  library: MediaLibrary;
  events: PlaybackEventSink;
  onError?: (message: string, error: unknown) => void;
}

// Limits keep every event inside the ingest's per-line and per-field limits.
const clip = (text: string, max: number) => (text.length > max ? text.slice(0, max) : text);
const MAX_ID = 256;

/**
 * Turns a refused request into its events: `error` (with what the Error Report needs), after a
 * `request` for playback requests; for a workspace that exists only, and never for a client
 * over its refusal limit (only refusals it caused count: not 5xx).
 */
export class PlaybackRefusals {
  constructor(private readonly deps: RefusalDeps) {}

  async refuse(r: Refusal): Promise<RefusalOutcome> {
    const admission = r.failure.httpStatus < 500 && r.call.refusalGate ? await r.call.refusalGate() : ADMITTED;
    if (!admission.admitted) return { owner: null, throttled: { retryAfterS: admission.retryAfterS } };
    const owner = r.owner ?? (await this.linkedOwner(r.claimedOwner));
    if (owner === null || r.assetId.length === 0 || r.assetId.length > MAX_ID) return { owner: null };
    const base = {
      owner,
      asset_id: r.assetId,
      session_id: r.session ?? this.deps.ids.uuid(),
      ts: r.ts,
      ...((await this.workspaceOnly(await this.libraryOf(r, owner), r.assetId)) ? { workspace_only: true as const } : {}),
    };
    const error: EdgeEvent = {
      type: 'error',
      ...base,
      error_code: r.failure.errorCode,
      http_status: r.failure.httpStatus,
      url: clip(r.call.url, 4096),
      ip: clip(r.call.clientIp, 64),
      ua: clip(r.call.userAgent, 1024),
      msg: clip(r.failure.message, 512),
    };
    this.deps.events.emit(r.countsRequest ? [{ type: 'request', ...base }, error] : [error]);
    return { owner };
  }

  /**
   * The library the refused content would come from: another workspace's (`coid`) only when it
   * shares that content with the owner, else the owner's own. So a refused play of unshared
   * content counts for the workspace only, and the owner's statistics never tell whether the
   * other workspace holds that asset.
   */
  private async libraryOf(r: Refusal, owner: string): Promise<string> {
    const library = r.library ?? owner;
    if (library === owner) return owner;
    try {
      return (await mayPlayAcross(this.deps.directory, library, owner, r.assetId)) ? library : owner;
    } catch (error) {
      this.deps.onError?.('share lookup failed', error);
      return owner;
    }
  }

  /** Refusals of assets the library does not hold count for the workspace only, never as a new asset. */
  private async workspaceOnly(library: string, assetId: string): Promise<boolean> {
    try {
      return (await this.deps.library.find(library, assetId)) === undefined;
    } catch (error) {
      this.deps.onError?.('media library lookup failed', error);
      return true;
    }
  }

  /** The named workspace when it exists (errors of others cannot be linked). */
  private async linkedOwner(oid: string | undefined): Promise<string | null> {
    if (oid === undefined || oid.length === 0 || oid.length > 64) return null;
    try {
      return (await this.deps.directory.signingKeys(oid)) === null ? null : oid;
    } catch (error) {
      this.deps.onError?.('owner lookup failed', error);
      return null;
    }
  }
}
