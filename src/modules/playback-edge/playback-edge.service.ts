import type { Clock } from '../../platform/clock.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { PlaybackEvent } from '../vod-stats/events.schema.js';
import { decideWithin, type AdDecisionServer } from './ad-decision.js';
import type { DrmProvider } from './drm-provider.js';
import { renderPlaylist, type AdSegment } from './hls-playlist.js';
import type { PlaybackDirectory } from './playback-catalog.js';
import type { PlaybackEventSink } from './playback-events.js';
import { failure, PlaybackFailure } from './playback-failure.js';
import { SESSION_ID } from './playback-params.js';
import { parsePlaybackQuery } from './playback-token.js';
import { checkPlayback, type PlaybackRequest, type ValidPlayback } from './playback-validator.js';
import { releaseClaims, type SingleUseGuard } from './single-use-guard.js';

/** Whether one more refusal may be answered as such (counted in statistics, reported), or must be a 429. */
export type RefusalAdmission = { admitted: true } | { admitted: false; retryAfterS: number };

/** Asks, for one request's client address, whether its next refusal is admitted (and counts it). */
export type RefusalGate = () => Promise<RefusalAdmission>;

export const ADMITTED: RefusalAdmission = { admitted: true };

/** A playback request with what the error event and report need about the viewer. */
export interface PlaybackCall extends PlaybackRequest {
  /** The full URL as requested (the report's `url`). */
  url: string;
  userAgent: string;
  /** Asked before a refusal the client caused (4xx) is answered: the per-address limit. Default: always admitted. */
  refusalGate?: RefusalGate;
}

export type PlaybackResult =
  | { ok: true; playlist: string; owner: string; session: string }
  | {
      ok: false;
      failure: PlaybackFailure;
      /** The workspace events and the report went to; null when none could be linked or the refusal was throttled. */
      owner: string | null;
      /** Set when the client is over its refusal limit: answer 429, nothing was emitted. */
      throttled?: { retryAfterS: number };
    };

export interface PlaybackEdgeDeps {
  clock: Clock;
  ids: IdGenerator;
  directory: PlaybackDirectory;
  drm: DrmProvider;
  adDecisions: AdDecisionServer;
  sessions: SingleUseGuard;
  drmSignatures: SingleUseGuard;
  events: PlaybackEventSink;
  /** A monotonic millisecond reading with sub-millisecond resolution, for latencies (performance.now). */
  stopwatch: () => number;
  onError?: (message: string, error: unknown) => void;
  /** Called once per answered playback (metrics): null when played, the error code, or `throttled`. */
  onOutcome?: (outcome: number | null | 'throttled') => void;
}

// Limits keep every event inside the ingest's per-line and per-field limits.
const clip = (text: string, max: number) => (text.length > max ? text.slice(0, max) : text);
const MAX_ID = 256;

/**
 * The playback edge: checks a signed playback URL, asks the ad decision server when the URL
 * names an ad configuration, answers an HLS media playlist, and emits the playback's events
 * (request, ad, manifest, start; or request and error) into the statistics pipeline.
 */
export class PlaybackEdgeService {
  constructor(private readonly deps: PlaybackEdgeDeps) {}

  async play(call: PlaybackCall): Promise<PlaybackResult> {
    const started = this.deps.stopwatch();
    const ts = this.deps.clock.now();
    const query = parsePlaybackQuery(call.rawQuery);
    let checked: ValidPlayback | PlaybackFailure;
    try {
      checked = await checkPlayback(call, query, this.deps);
    } catch (error) {
      this.deps.onError?.('playback check failed', error);
      checked = failure(999, 500, 'the playback could not be checked');
    }
    if (checked instanceof PlaybackFailure) return this.refuse(call, query.params, checked, ts);

    const pbs = checked.options.session;
    const session = pbs ?? this.deps.ids.uuid();
    const base = { owner: checked.owner, asset_id: call.contentId, session_id: session, ts };
    const events: PlaybackEvent[] = [{ type: 'request', ...base }];
    let ads: AdSegment[] = [];
    if (checked.adConfig) {
      const config = checked.adConfig;
      const askedAt = this.deps.stopwatch();
      const outcome = await decideWithin(
        this.deps.adDecisions,
        { owner: checked.owner, contentId: call.contentId, session, targeting: checked.targeting, config: { name: config.name, adServerUrl: config.adServerUrl ?? '', slotsS: config.slotsS, simulatedLatencyMs: config.simulatedLatencyMs } },
        this.deps.clock,
        config.timeoutMs,
      );
      if (outcome.kind !== 'ads') {
        await releaseClaims(checked.claims, (error) => this.deps.onError?.('a single-use claim could not be given back', error));
        if (outcome.kind === 'failed') this.deps.onError?.('ad decision failed', outcome.error);
        const refused = outcome.kind === 'timeout'
          ? failure(130, 504, `the ad decision server did not answer within ${config.timeoutMs} ms`)
          : failure(999, 500, 'the ad decision server failed');
        return this.refuse(call, query.params, refused, ts, checked.owner);
      }
      ads = outcome.ads;
      events.push({ type: 'ad', ...base, latency_ms: this.elapsed(askedAt) });
    }
    const segmentBase = call.kind === 'asset' ? `/segments/${encodeURIComponent(call.contentId)}` : `/segments/event/${encodeURIComponent(call.contentId)}`;
    const playlist = renderPlaylist(checked.plan, segmentBase, ads);
    events.push({ type: 'manifest', ...base, latency_ms: this.elapsed(started) }, { type: 'start', ...base });
    this.deps.events.emit(events);
    this.deps.onOutcome?.(null);
    return { ok: true, playlist, owner: checked.owner, session };
  }

  private elapsed(since: number): number {
    return Math.max(0, Math.round((this.deps.stopwatch() - since) * 1000) / 1000);
  }

  /**
   * Emits request + error for a URL linked to an existing workspace; nothing otherwise, and
   * nothing for a client over its refusal limit (only refusals it caused count: not 5xx).
   */
  private async refuse(call: PlaybackCall, params: ReadonlyMap<string, string>, refused: PlaybackFailure, ts: number, knownOwner?: string): Promise<PlaybackResult> {
    const admission = refused.httpStatus < 500 && call.refusalGate ? await call.refusalGate() : ADMITTED;
    if (!admission.admitted) {
      this.deps.onOutcome?.('throttled');
      return { ok: false, failure: refused, owner: null, throttled: { retryAfterS: admission.retryAfterS } };
    }
    this.deps.onOutcome?.(refused.errorCode);
    const owner = knownOwner ?? (await this.linkedOwner(params.get('oid')));
    if (owner === null || call.contentId.length === 0 || call.contentId.length > MAX_ID) return { ok: false, failure: refused, owner: null };
    const pbs = params.get('pbs');
    const session = pbs !== undefined && SESSION_ID.test(pbs) ? pbs : this.deps.ids.uuid();
    const base = { owner, asset_id: call.contentId, session_id: session, ts };
    this.deps.events.emit([
      { type: 'request', ...base },
      {
        type: 'error',
        ...base,
        error_code: refused.errorCode,
        http_status: refused.httpStatus,
        url: clip(call.url, 4096),
        ip: clip(call.clientIp, 64),
        ua: clip(call.userAgent, 1024),
        msg: clip(refused.message, 512),
      },
    ]);
    return { ok: false, failure: refused, owner };
  }

  /** The URL's owner when it names an existing workspace (errors of others cannot be linked). */
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
