import type { Clock } from '../../platform/clock.js';
import { signaturesEqual } from '../../platform/auth/v4-signature.js';
import type { DrmProvider } from './drm-provider.js';
import type { LiveLibrary, LiveWindow } from './live-library.js';
import type { MediaLibrary, PackagedAsset } from './media-library.js';
import { adConfigProblems, mayPlayAcross, type AdConfig, type PlaybackDirectory } from './playback-catalog.js';
import { failure, PlaybackFailure } from './playback-failure.js';
import { parsePlaybackOptions, type PlaybackOptions } from './playback-params.js';
import { contentTypeOf, playbackSignature, TOKEN_VERSION, type ContentKind, type PlaybackQuery } from './playback-token.js';
import { checkEventWindow, sessionPlanOf } from './segment-plan.js';
import { plannedRange } from './session-media.js';
import type { SessionPlan } from './session-token.js';
import { releaseClaims, type SingleUseClaim, type SingleUseGuard } from './single-use-guard.js';

/** A playback request as the edge sees it, before any check. */
export interface PlaybackRequest {
  kind: ContentKind;
  /** The id in the path (decoded). */
  contentId: string;
  /** The path's extension: only `m3u8` is served. */
  format: string;
  /** The query text after `?`, exactly as sent. */
  rawQuery: string;
  clientIp: string;
}

/** A URL that passed every check: what to play, for whom. */
export interface ValidPlayback {
  owner: string;
  /**
   * What to play (from the library of `coid` when given, else of `owner`): a packaged asset,
   * or a live event's window (a managed slicer's live output).
   */
  content: PlayContent;
  /** The URL's options that shape the segment list, checked against every rendition. */
  plan: SessionPlan;
  options: PlaybackOptions;
  adConfig: AdConfig | undefined;
  /** `ad.*` parameters, passed to the ad decision server. */
  targeting: Record<string, string>;
  /** Single-use claims taken (pbs, DRM signature), to give back if the playback fails later. */
  claims: SingleUseClaim[];
}

export type PlayContent = { kind: 'asset'; asset: PackagedAsset } | { kind: 'live'; live: LiveWindow };

export interface PlaybackCheckDeps {
  clock: Clock;
  directory: PlaybackDirectory;
  library: MediaLibrary;
  /** Live output of managed slicers (live events); without it no live event plays. */
  live?: LiveLibrary;
  drm: DrmProvider;
  /** Playback sessions (`pbs`) already used. */
  sessions: SingleUseGuard;
  /** Signatures of DRM-protected URLs already used. */
  drmSignatures: SingleUseGuard;
  /** Longest a URL may live (PLAYLINE_PLAYBACK_MAX_LIFETIME_S): an `exp` further ahead is refused (101). */
  maxLifetimeMs: number;
}

const REQUIRED = ['exp', 'rn', 'ct', 'cid', 'oid'] as const;
const EXP = /^\d{1,12}$/;
const HEX_SIG = /^[0-9a-f]{64}$/;

const normalIp = (ip: string) => (ip.startsWith('::ffff:') ? ip.slice(7) : ip).toLowerCase();

/** Checks the parameters that need no lookup: presence, token version, form, content match. */
function checkForm(req: PlaybackRequest, q: PlaybackQuery): PlaybackOptions | PlaybackFailure {
  const p = q.params;
  const tc = p.get('tc');
  if (!tc) return failure(103, 400, 'tc (token version) is missing');
  if (tc !== TOKEN_VERSION) return failure(113, 400, `unknown token version tc=${tc.slice(0, 16)}`);
  for (const name of REQUIRED) if (!p.get(name)) return failure(103, 400, `${name} is missing or empty`);
  if (q.sig === null) return failure(108, 403, 'the URL carries no signature (sig)');
  if (q.sig === '') return failure(103, 400, 'sig is empty');
  if (q.trailingAfterSig) return failure(113, 400, 'sig must be the last parameter');
  if (q.repeated.length > 0) return failure(113, 400, `parameter ${q.repeated[0]?.slice(0, 32)} is given twice`);
  if (!EXP.test(p.get('exp') ?? '')) return failure(101, 400, 'exp must be Unix seconds');
  if (p.get('ct') !== contentTypeOf[req.kind]) {
    return req.kind === 'asset' ? failure(105, 400, 'ct must be a (asset) for /play/<asset_id>.m3u8') : failure(106, 400, 'ct must be e (event) for /play/event/<event_id>.m3u8');
  }
  if (p.get('cid') !== req.contentId) return failure(107, 403, 'cid does not match the content in the path');
  const options = parsePlaybackOptions(p);
  if (options instanceof PlaybackFailure) return options;
  if (req.format !== 'm3u8') return failure(999, 404, `no .${req.format.slice(0, 16)} manifests here: use .m3u8`);
  return options;
}

/** The secrets the URL may be signed with: the named application key's, or the owner's API keys. */
async function signingKeys(q: PlaybackQuery, options: PlaybackOptions, owner: string, directory: PlaybackDirectory): Promise<Buffer[] | PlaybackFailure> {
  const kid = q.params.get('kid');
  if (kid === undefined) {
    const keys = await directory.signingKeys(owner);
    return keys ?? failure(110, 403, 'unknown owner (oid)');
  }
  const versions = kid === '' ? [] : await directory.appKey(owner, kid);
  if (versions.length === 0) return failure(119, 403, `no application key named ${kid.slice(0, 64)}`);
  const active = versions.filter((v) => !v.revoked && (options.keyVersion === undefined || v.version === options.keyVersion));
  if (active.length === 0) {
    return failure(120, 403, options.keyVersion === undefined ? `application key ${kid} has no active version` : `application key ${kid} has no active version ${options.keyVersion}`);
  }
  return active.map((v) => v.secret);
}

interface SingleUseWanted extends SingleUseClaim {
  /** The answer when the value was already used. */
  refusal: PlaybackFailure;
}

/**
 * Takes every claim or none: on a value already used (its refusal) or a store failure (thrown),
 * the claims already taken are given back, so a refused URL uses up nothing.
 */
async function claimAll(wanted: readonly SingleUseWanted[], expiresAt: number): Promise<SingleUseClaim[] | PlaybackFailure> {
  const taken: SingleUseClaim[] = [];
  try {
    for (const w of wanted) {
      if (!(await w.guard.claim(w.owner, w.key, expiresAt))) {
        await releaseClaims(taken);
        return w.refusal;
      }
      taken.push({ guard: w.guard, owner: w.owner, key: w.key });
    }
  } catch (error) {
    await releaseClaims(taken);
    throw error;
  }
  return taken;
}

/**
 * The content plan: the packaged asset from the library and the URL's options applied to every
 * rendition's segments (117, 123-126), or for a live event its window checks (115, 117) and
 * then the slicer's live window (999/404 while the slicer has written none).
 */
async function contentOf(
  req: PlaybackRequest,
  options: PlaybackOptions,
  library: string,
  now: number,
  media: MediaLibrary,
  live: LiveLibrary | undefined,
): Promise<{ content: PlayContent; plan: SessionPlan } | PlaybackFailure> {
  if (req.kind === 'event') {
    const windowProblem = checkEventWindow(now, options);
    if (windowProblem) return windowProblem;
    const found = await live?.find(library, req.contentId);
    if (!found) return failure(999, 404, `live event ${req.contentId.slice(0, 64)} has no live output to play`);
    return { content: { kind: 'live', live: found }, plan: sessionPlanOf(options) };
  }
  const asset = await media.find(library, req.contentId);
  if (!asset) return failure(999, 404, `asset ${req.contentId.slice(0, 64)} is not in the library (or not packaged yet)`);
  const plan = sessionPlanOf(options);
  for (const rendition of asset.manifest.renditions) {
    const range = plannedRange(asset, rendition, plan);
    if (range instanceof PlaybackFailure) return range;
  }
  return { content: { kind: 'asset', asset }, plan };
}

/**
 * Checks a playback URL and maps the first problem to exactly one playback error code, in
 * this order: presence and form (103, 113, 108, 101, 105/106, 107, optional parameters,
 * format), signature (119, 120, 109/110), expiry (104) and lifetime (101), IP (111), private content (102), the
 * content plan (an asset the library does not hold: 999/404; 117, 123-126, 115), DRM policy
 * (114), ad configuration (121, 122, also an ad asset that is not packaged), and the
 * single-use claims (127, 112). The ad decision (130) is the caller's, after this.
 */
export async function checkPlayback(req: PlaybackRequest, q: PlaybackQuery, deps: PlaybackCheckDeps): Promise<ValidPlayback | PlaybackFailure> {
  const options = checkForm(req, q);
  if (options instanceof PlaybackFailure) return options;
  const p = q.params;
  const owner = p.get('oid') as string;
  const keys = await signingKeys(q, options, owner, deps.directory);
  if (keys instanceof PlaybackFailure) return keys;
  const sig = q.sig as string;
  const signedText = q.signedText as string;
  if (!HEX_SIG.test(sig) || !keys.some((key) => signaturesEqual(playbackSignature(key, signedText), sig))) {
    return p.has('extsid') ? failure(109, 403, 'the signature does not match (extsid given)') : failure(110, 403, 'the signature does not match');
  }
  const now = deps.clock.now();
  const expiresAtMs = Number(p.get('exp')) * 1000;
  if (now > expiresAtMs) return failure(104, 410, `the URL expired at ${new Date(expiresAtMs).toISOString()}`);
  // The signer picks exp: unbounded, one URL (and its session) would outlive every later revocation and the single-use memory.
  if (expiresAtMs - now > deps.maxLifetimeMs) {
    return failure(101, 400, `exp is more than ${Math.floor(deps.maxLifetimeMs / 1000)} s ahead, the longest a playback URL may live on this server (PLAYLINE_PLAYBACK_MAX_LIFETIME_S)`);
  }
  const ip = p.get('ip');
  if (ip !== undefined && normalIp(ip) !== normalIp(req.clientIp)) return failure(111, 403, 'the URL is bound to another IP address');

  // Content is private to its workspace: another's plays only when its owner shared it with this one.
  const contentOwner = p.get('coid');
  if (contentOwner !== undefined && !(await mayPlayAcross(deps.directory, contentOwner, owner, req.contentId))) {
    return failure(102, 403, 'the content owner (coid) has not shared this content with this workspace');
  }

  const content = await contentOf(req, options, contentOwner ?? owner, now, deps.library, deps.live);
  if (content instanceof PlaybackFailure) return content;

  const drmName = p.get('drm');
  if (drmName !== undefined) {
    const policy = await deps.directory.drmPolicy(owner, drmName);
    if (!policy) return failure(114, 404, `no DRM policy named ${drmName.slice(0, 64)}`);
    const problems = deps.drm.check(policy);
    if (problems.length > 0) return failure(114, 403, `the ${policy.provider} provider rejects policy ${policy.name}: ${problems[0]}`);
  }

  let adConfig: AdConfig | undefined;
  const adName = p.get('ad');
  if (adName !== undefined) {
    adConfig = adName === '' ? undefined : await deps.directory.adConfig(owner, adName);
    if (!adConfig) return failure(121, 400, `no ad configuration named ${adName.slice(0, 64)}`);
    const problems = adConfigProblems(adConfig);
    if (problems.length > 0) return failure(122, 422, `ad configuration ${adConfig.name} is not set up: ${problems.join('; ')}`);
    for (const adAsset of adConfig.adAssetIds) {
      // An ad is stitched whole: one still being packaged is not an ad yet.
      if (!(await deps.library.find(owner, adAsset))?.complete) return failure(122, 422, `ad configuration ${adConfig.name} names ad asset ${adAsset}, which is not packaged in the library`);
    }
  }

  // Claims last: a URL refused for any other reason must not use up its session or signature.
  const wanted: SingleUseWanted[] = [];
  if (options.session !== undefined) {
    wanted.push({ guard: deps.sessions, owner, key: options.session, refusal: failure(127, 409, 'this playback session (pbs) was already used') });
  }
  if (drmName !== undefined) {
    wanted.push({ guard: deps.drmSignatures, owner, key: sig, refusal: failure(112, 403, 'this DRM-protected URL was already used: sign a new one') });
  }
  const claims = await claimAll(wanted, expiresAtMs);
  if (claims instanceof PlaybackFailure) return claims;

  const targeting: Record<string, string> = {};
  for (const [name, value] of p) if (name.startsWith('ad.')) targeting[name.slice(3)] = value;
  return { owner, content: content.content, plan: content.plan, options, adConfig, targeting, claims };
}
