import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { CmcdSignals } from './cmcd.js';
import type { EdgeEvent } from './edge-events.js';
import { playlistEdgeOf, reached, reloadTargetOf, type BlockingReloads, type HoldResult, type ReloadTarget } from './live-blocking-reload.js';
import type { LiveLibrary } from './live-library.js';
import { LIVE_PART_FILE, liveFileKind, liveVariantOf } from './live-session.js';
import type { MediaLibrary, PackagedAsset } from './media-library.js';
import { mayPlayAcross, type PlaybackDirectory } from './playback-catalog.js';
import type { PackagedRendition } from '../../platform/media/packaged-manifest.js';
import type { PlaybackEventSink } from './playback-events.js';
import { failure, PlaybackFailure } from './playback-failure.js';
import { SESSION_ID } from './playback-params.js';
import type { PlaybackRefusals, ViewerCall } from './playback-refusals.js';
import type { SessionFirsts } from './session-firsts.js';
import { fileKindOf, parseSessionPath, variantOf, type SessionPath } from './session-media.js';
import type { SessionGrant, SessionTokens } from './session-token.js';

/** Variant playlists of one packaged asset kept, at most (one per rendition and segment plan in use); more start the asset's set afresh. */
const VARIANTS_PER_ASSET = 64;

/**
 * The variant playlists of packaged assets without ads, as rendered: a packaged asset's files
 * never change (a repackaged or deleted one is a new PackagedAsset from the library, or none), so
 * the text of a rendition under a segment plan is rendered once and kept with that asset object,
 * and goes with it when the library forgets it.
 */
export class VariantTexts {
  private readonly byAsset = new WeakMap<PackagedAsset, Map<string, string | PlaybackFailure>>();

  of(grant: SessionGrant, content: PackagedAsset, rendition: PackagedRendition): string | PlaybackFailure {
    let texts = this.byAsset.get(content);
    if (!texts) this.byAsset.set(content, (texts = new Map()));
    const key = `${rendition.name}\u0000${JSON.stringify(grant.plan)}`;
    let text = texts.get(key);
    if (text === undefined) {
      if (texts.size >= VARIANTS_PER_ASSET) texts.clear();
      text = variantOf(grant, content, rendition, []);
      texts.set(key, text);
    }
    return text;
  }
}

/** A request under a session's path: `/play/s/<token>/<path>`. */
export interface SessionCall extends ViewerCall {
  token: string;
  /** What follows the token: `v/<rendition>.m3u8`, `c/<file>`, `a/<n>/<file>`. */
  path: string;
  /** HEAD answers like GET but is no playback: it emits no manifest, ad or start. */
  method: 'GET' | 'HEAD';
  cmcd: CmcdSignals;
  /** Aborts when the client goes away (a held blocking reload is let go). */
  signal?: AbortSignal;
}

/** What a session request is, for metrics: a variant playlist, a file of the content or of an ad, or no session path. */
export type SessionRequestKind = 'variant' | 'content' | 'ad' | 'unknown';

const queryOf = (url: string): URLSearchParams => {
  const q = url.indexOf('?');
  return new URLSearchParams(q >= 0 ? url.slice(q + 1) : '');
};

const exists = (path: string): Promise<boolean> => stat(path).then((s) => s.isFile(), () => false);

/** The answer to a blocking request that was not held to the end: 503 after the time limit, 503/429 when the caps are reached. */
type Problem = Extract<SessionAnswer, { kind: 'problem' }>;

function unheld<T>(held: HoldResult<T>): Problem | undefined {
  if (held.kind === 'timeout') return { kind: 'problem', error: new AppError('service_unavailable', 'The segment or part asked for (_HLS_msn, _HLS_part) did not come within three target durations'), retryAfterS: 1 };
  if (held.kind !== 'full') return undefined;
  return held.scope === 'total'
    ? { kind: 'problem', error: new AppError('service_unavailable', 'This server holds as many blocking playlist reloads as it may (PLAYLINE_LIVE_BLOCKING_RELOADS): retry shortly'), retryAfterS: 1 }
    : { kind: 'problem', error: new AppError('throttled', 'Your network holds as many blocking playlist reloads as it may (PLAYLINE_LIVE_BLOCKING_RELOADS_PER_NETWORK): retry shortly'), retryAfterS: 1 };
}

const kindOf = (path: string): SessionRequestKind => {
  if (path.startsWith('v/')) return 'variant';
  if (path.startsWith('c/')) return 'content';
  return path.startsWith('a/') ? 'ad' : 'unknown';
};

export type SessionAnswer =
  /** `live`: a live playlist, rewritten from the slicer's output on each request, or one of an asset still being packaged (never cached). */
  | { kind: 'playlist'; text: string; live?: boolean }
  | {
      kind: 'file';
      /** The asset's directory and the file in it (a path its manifest names). */
      dir: string;
      file: string;
      /** Cache-Control of the file when not the default (immutable). */
      cacheControl?: string;
      /** Call once the file is being sent (200/206): emits the session's first start or ad. */
      served(): void;
      /** Whether a GET of this file would emit the session's first start or ad (served() not called yet for one). */
      firstPending(): boolean;
      /** Call when the file is not on disk any more (the asset was deleted meanwhile): its refusal. */
      gone(): Promise<SessionRefused>;
    }
  /** Not a playback refusal (no event, no refusal count): a bad or unheld LL-HLS blocking reload. */
  | { kind: 'problem'; error: AppError; retryAfterS?: number }
  | SessionRefused;

export interface SessionRefused {
  kind: 'refused';
  failure: PlaybackFailure;
  owner: string | null;
  throttled?: { retryAfterS: number };
}

export interface PlaybackSessionDeps {
  clock: Clock;
  library: MediaLibrary;
  /** Live output of managed slicers (sessions of live events). */
  live?: LiveLibrary;
  tokens: SessionTokens;
  /**
   * The shares, consulted on every request of a session of another workspace's content (cached
   * briefly by the directory): a share removed ends the grantee's sessions, live ones included.
   */
  directory: Pick<PlaybackDirectory, 'privateAsset' | 'sharesWith'>;
  /** Longest a session may live (PLAYLINE_PLAYBACK_MAX_LIFETIME_S); a token that runs further ahead (made before the bound) is refused as expired. */
  maxLifetimeMs: number;
  events: PlaybackEventSink;
  firsts: SessionFirsts;
  refusals: PlaybackRefusals;
  /** LL-HLS blocking playlist reloads of live sessions; without it `_HLS_msn` is answered at once. */
  blocking?: BlockingReloads;
  /** Called once per answered session request (metrics): null when served, the error code, or `throttled`. */
  onOutcome?: (kind: SessionRequestKind, outcome: number | null | 'throttled') => void;
}

/**
 * Serves a playback session from its signed token alone (no storage access): variant playlists
 * with the preroll ads stitched in, and the content's and ads' files. Statistics come from what
 * it serves: `manifest` at the session's first variant playlist (latency from the playback
 * request), `ad` at its first ad segment (with the ad decision latency), `start` at its first
 * content segment; each once per session on this instance. An expired (104) or forged (110)
 * token, or a file the session does not have (999), is refused with an `error` event.
 */
export class PlaybackSessionService {
  private readonly variants = new VariantTexts();

  constructor(private readonly deps: PlaybackSessionDeps) {}

  async serve(call: SessionCall): Promise<SessionAnswer> {
    const ts = this.deps.clock.now();
    const check = this.deps.tokens.verify(call.token, ts);
    if (!check.ok && check.reason === 'forged') {
      const claimed = check.claimed;
      const refused = failure(110, 403, 'the playback session token does not verify');
      // Claimed, not verified: linked only to a workspace that exists, and rate limited per address like any refusal.
      const session = claimed && SESSION_ID.test(claimed.session) ? claimed.session : undefined;
      const outcome = await this.deps.refusals.refuse({ failure: refused, call, claimedOwner: claimed?.owner, assetId: claimed?.assetId ?? '', session, countsRequest: false, ts });
      return this.refused(kindOf(call.path), refused, outcome);
    }
    if (!check.ok) {
      return this.refuse(call, check.grant, kindOf(call.path), failure(104, 410, `the playback session expired at ${new Date(check.grant.expiresAt * 1000).toISOString()}`), ts);
    }
    const grant = check.grant;
    if (grant.expiresAt * 1000 - ts > this.deps.maxLifetimeMs) {
      return this.refuse(call, grant, kindOf(call.path), failure(104, 410, 'the playback session runs past the longest a playback session may live on this server: request the playback URL again'), ts);
    }
    // The token proves the share held when the session began, not now: it is asked again.
    if (grant.library !== grant.owner && !(await mayPlayAcross(this.deps.directory, grant.library, grant.owner, grant.assetId))) {
      return this.refuse(call, grant, kindOf(call.path), failure(102, 403, 'the content owner no longer shares this content with this workspace'), ts);
    }
    if (call.cmcd.bufferStarved) {
      this.deps.events.emit([{ type: 'rebuffer', owner: grant.owner, asset_id: grant.assetId, session_id: grant.session, ts }]);
    }
    const path = parseSessionPath(call.path);
    if (path instanceof PlaybackFailure) return this.refuse(call, grant, 'unknown', path, ts);
    if (grant.live) return this.serveLive(call, grant, path, ts);
    const content = await this.deps.library.find(grant.library, grant.assetId);
    if (!content) return this.refuse(call, grant, kindOf(call.path), failure(999, 404, `asset ${grant.assetId.slice(0, 64)} is no longer in the library`), ts);
    if (path.kind === 'variant') return this.variant(call, grant, content, path.rendition, ts);
    if (path.kind === 'content') return this.file(call, grant, content, path.file, ts, 'start');
    const adId = grant.ads?.assetIds[path.index];
    const ad = adId === undefined ? undefined : await this.deps.library.find(grant.owner, adId);
    if (!ad) return this.refuse(call, grant, 'ad', failure(999, 404, `this session has no ad ${path.index} (or it left the library)`), ts);
    return this.file(call, grant, ad, path.file, ts, 'ad');
  }

  /** A live event's session: the slicer's media playlists as they are now, and the files of its window. */
  private async serveLive(call: SessionCall, grant: SessionGrant, path: SessionPath, ts: number): Promise<SessionAnswer> {
    const live = this.deps.live;
    const event = grant.assetId.slice(0, 64);
    if (path.kind === 'variant') {
      let playlist = await live?.playlist(grant.library, grant.assetId, path.rendition);
      if (playlist === undefined || !live) return this.refuse(call, grant, 'variant', failure(999, 404, `live event ${event} has no live rendition ${path.rendition}`), ts);
      const target = reloadTargetOf(queryOf(call.url));
      if (typeof target === 'string') return { kind: 'problem', error: new AppError('bad_request', `${target} (RFC 8216bis blocking playlist reload)`) };
      if (target !== undefined) {
        const held = await this.blockingReload(call, grant, live, path.rendition, playlist, target);
        if (held.kind !== 'ready') return held.kind === 'gone' ? this.refuse(call, grant, 'variant', failure(999, 404, `live event ${event} has no live rendition ${path.rendition}`), ts) : held;
        playlist = held.value;
      }
      if (call.method === 'GET' && this.deps.firsts.first(grant.owner, grant.session, 'manifest')) {
        this.emit(grant, { type: 'manifest', latency_ms: Math.max(0, ts - grant.requestedAt) }, ts);
      }
      this.deps.onOutcome?.('variant', null);
      return { kind: 'playlist', text: liveVariantOf(playlist), live: true };
    }
    const fileKind = path.kind === 'content' ? liveFileKind(path.file) : undefined;
    if (!live || path.kind !== 'content' || fileKind === undefined) return this.refuse(call, grant, kindOf(call.path), failure(999, 404, 'no such file in this live session'), ts);
    const hinted = await this.awaitHintedPart(call, grant, live, path.file);
    if (hinted) return hinted;
    return {
      kind: 'file',
      dir: live.dirOf(grant.library, grant.assetId),
      file: path.file,
      // The init segment is written again when the slicer restarts with another configuration.
      ...(fileKind === 'init' ? { cacheControl: 'no-cache' } : {}),
      served: () => {
        this.deps.onOutcome?.('content', null);
        if (call.method !== 'GET' || fileKind !== 'segment' || !this.deps.firsts.first(grant.owner, grant.session, 'start')) return;
        const now = this.deps.clock.now();
        this.emit(grant, { type: 'start', startup_ms: Math.max(0, now - grant.requestedAt) }, now);
      },
      firstPending: () => call.method === 'GET' && fileKind === 'segment' && !this.deps.firsts.reached(grant.owner, grant.session, 'start'),
      gone: () => this.refuse(call, grant, 'content', failure(999, 404, `${path.file.slice(0, 128)} has left the live window`), ts),
    };
  }

  /**
   * A blocking reload (`_HLS_msn`, `_HLS_part`): the playlist once it holds the segment or part
   * asked for, held at most three target durations (then 503), within the caps of held requests.
   */
  private async blockingReload(call: SessionCall, grant: SessionGrant, live: LiveLibrary, rendition: string, now: string, target: ReloadTarget): Promise<{ kind: 'ready'; value: string } | { kind: 'gone' } | Problem> {
    const edge = playlistEdgeOf(now);
    if (reached(edge, target)) return { kind: 'ready', value: now };
    // RFC 8216bis 6.2.5.2: more than two segments ahead is a client error, answered at once.
    if (target.msn > edge.nextMsn + 2) return { kind: 'problem', error: new AppError('bad_request', `_HLS_msn ${target.msn} is more than two segments past the live edge (${edge.nextMsn}) of this playlist`) };
    const blocking = this.deps.blocking;
    if (!blocking) return { kind: 'ready', value: now };
    const key = `${live.dirOf(grant.library, grant.assetId)}/${rendition}`;
    const read = () => live.playlist(grant.library, grant.assetId, rendition);
    const held = await blocking.hold(key, call.clientIp, read, (text) => reached(playlistEdgeOf(text), target), edge.targetDurationS * 3000, call.signal);
    return held.kind === 'ready' || held.kind === 'gone' ? held : (unheld(held) as Problem);
  }

  /**
   * A part announced by EXT-X-PRELOAD-HINT, asked for before it exists (RFC 8216bis 6.2.6: the
   * server holds it): once its playlist lists it the file is served; a part that never comes (its
   * segment ended first) is a 404 as any file the window does not hold. Undefined: serve it now.
   */
  private async awaitHintedPart(call: SessionCall, grant: SessionGrant, live: LiveLibrary, file: string): Promise<SessionAnswer | undefined> {
    const part = LIVE_PART_FILE.exec(file);
    const blocking = this.deps.blocking;
    if (!part || !blocking || call.method !== 'GET') return undefined;
    const dir = live.dirOf(grant.library, grant.assetId);
    if (await exists(join(dir, file))) return undefined;
    const rendition = `media_${part[1] as string}`;
    const read = () => live.playlist(grant.library, grant.assetId, rendition);
    const now = await read();
    if (now === undefined) return undefined;
    const edge = playlistEdgeOf(now);
    const msn = Number(part[2]);
    // Only the next part of the open segment is waited for; anything else is answered as it stands.
    if (msn !== edge.nextMsn || Number(part[3]) !== edge.openParts) return undefined;
    const held = await blocking.hold(`${dir}/${rendition}`, call.clientIp, read, (text) => text.includes(`"${file}"`) || playlistEdgeOf(text).nextMsn > msn, edge.targetDurationS * 3000, call.signal);
    return unheld(held);
  }

  private async variant(call: SessionCall, grant: SessionGrant, content: PackagedAsset, name: string, ts: number): Promise<SessionAnswer> {
    const rendition = content.renditions.get(name);
    if (!rendition) return this.refuse(call, grant, 'variant', failure(999, 404, `asset ${grant.assetId.slice(0, 64)} has no rendition ${name}`), ts);
    const ads: PackagedAsset[] = [];
    for (const id of grant.ads?.assetIds ?? []) {
      const ad = await this.deps.library.find(grant.owner, id);
      if (!ad) return this.refuse(call, grant, 'variant', failure(999, 404, `ad asset ${id.slice(0, 64)} of this session is no longer in the library`), ts);
      ads.push(ad);
    }
    const text = ads.length === 0 ? this.variants.of(grant, content, rendition) : variantOf(grant, content, rendition, ads);
    if (text instanceof PlaybackFailure) return this.refuse(call, grant, 'variant', text, ts);
    if (call.method === 'GET' && this.deps.firsts.first(grant.owner, grant.session, 'manifest')) {
      this.emit(grant, { type: 'manifest', latency_ms: Math.max(0, ts - grant.requestedAt) }, ts);
    }
    this.deps.onOutcome?.('variant', null);
    // A playlist that grows while its asset is packaged is never cached (players reload it).
    return { kind: 'playlist', text, ...(content.complete ? {} : { live: true }) };
  }

  private async file(call: SessionCall, grant: SessionGrant, asset: PackagedAsset, file: string, ts: number, first: 'start' | 'ad'): Promise<SessionAnswer> {
    const fileKind = fileKindOf(asset, file);
    const kind: SessionRequestKind = first === 'ad' ? 'ad' : 'content';
    if (!fileKind) return this.refuse(call, grant, kind, failure(999, 404, 'no such file in this playback session'), ts);
    return {
      kind: 'file',
      dir: asset.dir,
      file,
      served: () => {
        this.deps.onOutcome?.(kind, null);
        if (call.method !== 'GET' || fileKind !== 'segment' || !this.deps.firsts.first(grant.owner, grant.session, first)) return;
        const now = this.deps.clock.now();
        if (first === 'ad') this.emit(grant, { type: 'ad', latency_ms: grant.ads?.latencyMs ?? 0 }, now);
        else this.emit(grant, { type: 'start', startup_ms: Math.max(0, now - grant.requestedAt) }, now);
      },
      firstPending: () => call.method === 'GET' && fileKind === 'segment' && !this.deps.firsts.reached(grant.owner, grant.session, first),
      gone: () => this.refuse(call, grant, kind, failure(999, 404, `${file.slice(0, 128)} is no longer in the library`), ts),
    };
  }

  private emit(grant: SessionGrant, event: { type: 'manifest' | 'ad'; latency_ms: number } | { type: 'start'; startup_ms?: number }, ts: number): void {
    const full: EdgeEvent = { ...event, owner: grant.owner, asset_id: grant.assetId, session_id: grant.session, ts };
    this.deps.events.emit([full]);
  }

  private async refuse(call: SessionCall, grant: SessionGrant, kind: SessionRequestKind, refused: PlaybackFailure, ts: number): Promise<SessionRefused> {
    const outcome = await this.deps.refusals.refuse({ failure: refused, call, owner: grant.owner, library: grant.library, assetId: grant.assetId, session: grant.session, countsRequest: false, ts });
    return this.refused(kind, refused, outcome);
  }

  private refused(kind: SessionRequestKind, refused: PlaybackFailure, outcome: { owner: string | null; throttled?: { retryAfterS: number } }): SessionRefused {
    this.deps.onOutcome?.(kind, outcome.throttled ? 'throttled' : refused.errorCode);
    return { kind: 'refused', failure: refused, ...outcome };
  }
}
