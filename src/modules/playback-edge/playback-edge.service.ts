import type { Clock } from '../../platform/clock.js';
import type { IdGenerator } from '../../platform/ids.js';
import { decideWithin, type AdDecisionServer } from './ad-decision.js';
import type { CmcdSignals } from './cmcd.js';
import type { DrmProvider } from './drm-provider.js';
import type { LiveLibrary } from './live-library.js';
import { liveMultivariantOf } from './live-session.js';
import type { MediaLibrary, PackagedAsset } from './media-library.js';
import type { PlaybackDirectory } from './playback-catalog.js';
import type { PlaybackEventSink } from './playback-events.js';
import { failure, PlaybackFailure } from './playback-failure.js';
import { playbackSessionOf } from './playback-params.js';
import { ADMITTED, type PlaybackRefusals, type ViewerCall } from './playback-refusals.js';
import { parsePlaybackQuery } from './playback-token.js';
import { checkPlayback, type PlaybackRequest, type ValidPlayback } from './playback-validator.js';
import { multivariantOf } from './session-media.js';
import type { SessionGrant, SessionTokens } from './session-token.js';
import { releaseClaims, type SingleUseGuard } from './single-use-guard.js';

/** A playback request with what the error event and report need about the viewer. */
export interface PlaybackCall extends PlaybackRequest, ViewerCall {
  /** The player's CMCD: its `sid` names the session when the URL has no `pbs` (playbackSessionOf), refused or not. */
  cmcd?: CmcdSignals;
  /**
   * HEAD is checked and answered like GET but is no playback: it emits no event (no `request`,
   * nor `error` when refused: statistics and Error Reports count plays), gives back the
   * single-use values it claimed (`pbs`, DRM signature) so the GET that follows still plays, and
   * its refusals still count against the address's refusal limit. Default GET.
   */
  method?: 'GET' | 'HEAD';
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
  library: MediaLibrary;
  /** Live output of managed slicers: what `/play/event/<slicer id>.m3u8` plays. */
  live?: LiveLibrary;
  drm: DrmProvider;
  adDecisions: AdDecisionServer;
  sessions: SingleUseGuard;
  drmSignatures: SingleUseGuard;
  /** Longest a URL may live (PLAYLINE_PLAYBACK_MAX_LIFETIME_S). */
  maxLifetimeMs: number;
  events: PlaybackEventSink;
  tokens: SessionTokens;
  refusals: PlaybackRefusals;
  /** A monotonic millisecond reading with sub-millisecond resolution, for the ad decision latency (performance.now). */
  stopwatch: () => number;
  onError?: (message: string, error: unknown) => void;
  /** Called once per answered playback (metrics): null when played, the error code, or `throttled`. */
  onOutcome?: (outcome: number | null | 'throttled') => void;
}

/**
 * The playback edge's front door: checks a signed playback URL, asks the ad decision server when
 * the URL names an ad configuration, and answers a multivariant playlist whose variants and
 * segments live under a new session's signed path (`/play/s/<token>/...`, served by
 * PlaybackSessionService, which emits the session's manifest, ad and start events as the player
 * fetches them). Emits `request` here; a refusal emits `request` and `error`.
 */
export class PlaybackEdgeService {
  constructor(private readonly deps: PlaybackEdgeDeps) {}

  async play(call: PlaybackCall): Promise<PlaybackResult> {
    const ts = this.deps.clock.now();
    const query = parsePlaybackQuery(call.rawQuery);
    let checked: ValidPlayback | PlaybackFailure;
    try {
      checked = await checkPlayback(call, query, this.deps);
    } catch (error) {
      this.deps.onError?.('playback check failed', error);
      checked = failure(999, 500, 'the playback could not be checked');
    }
    // Read off the raw query (a refusal's may not have passed the checks), by the same rule as a valid playback's.
    const named = playbackSessionOf(query.params.get('pbs'), call.cmcd?.sid);
    const refuse = (refused: PlaybackFailure, owner?: string) =>
      this.refuse(call, refused, ts, { owner, claimedOwner: query.params.get('oid'), library: query.params.get('coid'), session: named });
    if (checked instanceof PlaybackFailure) return refuse(checked);

    const session = named ?? this.deps.ids.uuid();
    let ads: { assets: PackagedAsset[]; latencyMs: number } | undefined;
    if (checked.adConfig) {
      const decided = await this.decideAds(checked, call.contentId, session);
      if (decided instanceof PlaybackFailure) {
        await releaseClaims(checked.claims, (error) => this.deps.onError?.('a single-use claim could not be given back', error));
        return refuse(decided, checked.owner);
      }
      ads = decided;
    }
    const grant: SessionGrant = {
      owner: checked.owner,
      library: checked.content.kind === 'asset' ? checked.content.asset.owner : checked.content.live.owner,
      assetId: call.contentId,
      session,
      requestedAt: ts,
      expiresAt: Number(query.params.get('exp')),
      plan: checked.plan,
      ...(ads && ads.assets.length > 0 ? { ads: { assetIds: ads.assets.map((a) => a.assetId), latencyMs: ads.latencyMs } } : {}),
      ...(checked.content.kind === 'live' ? { live: true } : {}),
    };
    const token = this.deps.tokens.sign(grant);
    const playlist = checked.content.kind === 'live' ? liveMultivariantOf(token, checked.content.live.index) : multivariantOf(token, grant, checked.content.asset, ads?.assets ?? []);
    if (call.method === 'HEAD') await releaseClaims(checked.claims, (error) => this.deps.onError?.('a single-use claim could not be given back', error));
    else this.deps.events.emit([{ type: 'request', owner: checked.owner, asset_id: call.contentId, session_id: session, ts }]);
    this.deps.onOutcome?.(null);
    return { ok: true, playlist, owner: checked.owner, session };
  }

  /** The preroll ads: the ad decision (130 on timeout, 999 on failure), each ad packaged in the owner's library (else 122). */
  private async decideAds(checked: ValidPlayback, contentId: string, session: string): Promise<{ assets: PackagedAsset[]; latencyMs: number } | PlaybackFailure> {
    const config = checked.adConfig;
    if (!config) return { assets: [], latencyMs: 0 };
    const askedAt = this.deps.stopwatch();
    const outcome = await decideWithin(
      this.deps.adDecisions,
      { owner: checked.owner, contentId, session, targeting: checked.targeting, config: { name: config.name, adServerUrl: config.adServerUrl ?? '', adAssetIds: config.adAssetIds, simulatedLatencyMs: config.simulatedLatencyMs } },
      this.deps.clock,
      config.timeoutMs,
    );
    if (outcome.kind === 'timeout') return failure(130, 504, `the ad decision server did not answer within ${config.timeoutMs} ms`);
    if (outcome.kind === 'failed') {
      this.deps.onError?.('ad decision failed', outcome.error);
      return failure(999, 500, 'the ad decision server failed');
    }
    const latencyMs = Math.max(0, Math.round((this.deps.stopwatch() - askedAt) * 1000) / 1000);
    const assets: PackagedAsset[] = [];
    for (const id of outcome.ads.slice(0, 10)) {
      const asset = await this.deps.library.find(checked.owner, id);
      if (!asset?.complete) return failure(122, 422, `ad configuration ${config.name}: ad asset ${id.slice(0, 64)} is not packaged in the library`);
      assets.push(asset);
    }
    return { assets, latencyMs };
  }

  private async refuse(
    call: PlaybackCall,
    refused: PlaybackFailure,
    ts: number,
    who: { owner: string | undefined; claimedOwner: string | undefined; library: string | undefined; session: string | undefined },
  ): Promise<PlaybackResult> {
    if (call.method === 'HEAD') return this.refuseHead(call, refused);
    const outcome = await this.deps.refusals.refuse({
      failure: refused,
      call,
      ...(who.owner !== undefined ? { owner: who.owner } : { claimedOwner: who.claimedOwner }),
      library: who.library,
      assetId: call.contentId,
      session: who.session,
      countsRequest: true,
      ts,
    });
    this.deps.onOutcome?.(outcome.throttled ? 'throttled' : refused.errorCode);
    return { ok: false, failure: refused, ...outcome };
  }

  /** A refused HEAD: the same answer, throttled past the address's limit like any refusal, but no event and no report. */
  private async refuseHead(call: PlaybackCall, refused: PlaybackFailure): Promise<PlaybackResult> {
    const admission = refused.httpStatus < 500 && call.refusalGate ? await call.refusalGate() : ADMITTED;
    this.deps.onOutcome?.(admission.admitted ? refused.errorCode : 'throttled');
    return { ok: false, failure: refused, owner: null, ...(admission.admitted ? {} : { throttled: { retryAfterS: admission.retryAfterS } }) };
  }
}
