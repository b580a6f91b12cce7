import type { V4Signer } from './sign.js';
import type {
  ApiKey, Asset, AssetCollection, WorkspaceUsage, ServerSettings, WebhookAttemptDetail, CallbackDeliveries, ContentShare, CallbackSettings, CallbackTestResult, Collection, History, HistoryRange, LoggedAttemptDetail, LoggedAttemptPage,
  NewSchedule, NewSlicer, NewTarget, Region, Schedule, SchedulePatch, Slicer, SlicerCollection, SlicerTaskCollection, Target, TargetPatch,
  VodStats, VodStatsCollection, VodStatsSummary, Workspace, NewWebhookSubscription, WebhookAttemptCollection, WebhookSubscription,
  WebhookSubscriptionCollection, WebhookSubscriptionWithSecret,
} from './types.js';

/** A failed API call, carrying what the server said (problem+json) or what went wrong on the way. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly requestId: string | undefined,
    readonly body: Record<string, unknown> | undefined,
  ) {
    super(`${code}: ${detail}`);
    this.name = 'ApiProblem';
  }
}

type Query = Record<string, string | number | undefined>;

const toProblem = (status: number, text: string, requestId: string | undefined): ApiProblem => {
  let body: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    body = undefined;
  }
  const code = typeof body?.code === 'string' ? body.code : `http_${status}`;
  const detail = typeof body?.detail === 'string' ? body.detail : text.trim().slice(0, 200) || `The server answered HTTP ${status}`;
  const id = typeof body?.request_id === 'string' ? body.request_id : requestId;
  return new ApiProblem(status, code, detail, id, body);
};

/**
 * Signed calls to the v4 API of the server that served this page. No privileged endpoint:
 * the page can do exactly what the signed-in key can. A browser whose clock is off by more
 * than the server's tolerance is corrected once from the server's `Date` header.
 */
export class DashboardApi {
  private skewMs = 0;

  constructor(private readonly signer: V4Signer) {}

  get owner(): string {
    return this.signer.owner;
  }

  /** Whether the page signs with the key whose secret starts with `prefix` (that key cannot revoke itself). */
  signsWithKey(prefix: string): boolean {
    return this.signer.keyStartsWith(prefix);
  }

  async request<T>(method: string, path: string, options: { query?: Query; body?: unknown } = {}): Promise<T> {
    return (await this.exchange<T>(method, path, options)).value;
  }

  /** A signed call and the response's headers (the asset list's next page is in `Link`). */
  private async exchange<T>(method: string, path: string, options: { query?: Query; body?: unknown } = {}, retried = false): Promise<{ value: T; headers: Headers }> {
    const init: RequestInit = { method, headers: { accept: 'application/json' }, cache: 'no-store', credentials: 'omit', redirect: 'error' };
    if (options.body !== undefined) {
      init.body = JSON.stringify(options.body);
      init.headers = { accept: 'application/json', 'content-type': 'application/json' };
    }
    let response: Response;
    try {
      response = await fetch(await this.signedPath(path, options.query), init);
    } catch (err) {
      throw new ApiProblem(0, 'network_error', `Cannot reach the Playline server (${(err as Error).message}). Is it still running?`, undefined, undefined);
    }
    const text = await response.text();
    if (response.ok) return { value: (text.length > 0 ? JSON.parse(text) : undefined) as T, headers: response.headers };
    const problem = toProblem(response.status, text, response.headers.get('x-request-id') ?? undefined);
    if (!retried && this.correctSkew(problem, response.headers.get('date'))) return this.exchange<T>(method, path, options, true);
    throw problem;
  }

  /** A refusal for the browser's clock: corrects it once from the server's `Date` (true: try again). */
  private correctSkew(problem: ApiProblem, dateHeader: string | null): boolean {
    const serverDate = Date.parse(dateHeader ?? '');
    if (problem.code !== 'timestamp_out_of_range' || !Number.isFinite(serverDate)) return false;
    this.skewMs = serverDate - Date.now();
    return true;
  }

  /**
   * `/api/v4<path>?<query>&msg&sig`, signed now: for requests the page cannot make with `fetch`
   * (an `<img>` of a poster, an upload with progress). Valid within the server's timestamp tolerance.
   */
  async signedPath(path: string, query: Query = {}): Promise<string> {
    const { msg, sig } = await this.signer.sign(Math.floor((Date.now() + this.skewMs) / 1000));
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) params.append(key, String(value));
    params.append('msg', msg);
    params.append('sig', sig);
    return `/api/v4${path}?${params.toString()}`;
  }

  /**
   * Uploads a media file as a new asset (`POST /api/v4/assets`, the body streamed) with XMLHttpRequest,
   * whose upload events give the progress (`fetch` has none). `signal` aborts it.
   */
  async uploadAsset(file: Blob, options: { title?: string; onProgress?: (sent: number, total: number) => void; signal?: AbortSignal } = {}, retried = false): Promise<Asset> {
    const url = await this.signedPath('/assets', { title: options.title });
    const type = /^(video|audio)\/[A-Za-z0-9!#$&^_.+-]+$/.test(file.type) ? file.type : 'application/octet-stream';
    const answer = await new Promise<{ status: number; text: string; requestId: string | undefined; date: string | null }>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open('POST', url);
      xhr.setRequestHeader('content-type', type);
      xhr.setRequestHeader('accept', 'application/json');
      xhr.upload.addEventListener('progress', (event) => options.onProgress?.(event.loaded, event.lengthComputable ? event.total : file.size));
      xhr.addEventListener('load', () => resolve({ status: xhr.status, text: xhr.responseText, requestId: xhr.getResponseHeader('x-request-id') ?? undefined, date: xhr.getResponseHeader('date') }));
      xhr.addEventListener('error', () => reject(new ApiProblem(0, 'network_error', 'The upload was cut off (the server closed the connection, or cannot be reached).', undefined, undefined)));
      xhr.addEventListener('abort', () => reject(new ApiProblem(0, 'aborted', 'Upload cancelled.', undefined, undefined)));
      options.signal?.addEventListener('abort', () => xhr.abort(), { once: true });
      xhr.send(file);
    });
    if (answer.status >= 200 && answer.status < 300) return JSON.parse(answer.text) as Asset;
    const problem = toProblem(answer.status, answer.text, answer.requestId);
    if (!retried && this.correctSkew(problem, answer.date)) return this.uploadAsset(file, options, true);
    throw problem;
  }

  /**
   * A signed playback URL of one of this workspace's assets (`/play/<id>.m3u8?tc=1&exp&rn&ct=a&cid&oid[&ad]&sig`)
   * or of a slicer's live event (`/play/event/<slicer id>.m3u8?...&ct=e...`), valid for `ttlS`, signed in
   * the page with the signed-in key: no API call, no new privilege.
   */
  async playbackUrl(contentId: string, options: { ttlS?: number; adConfig?: string; kind?: 'asset' | 'event' } = {}): Promise<string> {
    const event = options.kind === 'event';
    const nonce = Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, '0')).join('');
    const exp = Math.floor((Date.now() + this.skewMs) / 1000) + (options.ttlS ?? 3600);
    const pairs: Array<[string, string]> = [['tc', '1'], ['exp', String(exp)], ['rn', nonce], ['ct', event ? 'e' : 'a'], ['cid', contentId], ['oid', this.signer.owner]];
    if (options.adConfig) pairs.push(['ad', options.adConfig]);
    const query = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
    return `/play/${event ? 'event/' : ''}${encodeURIComponent(contentId)}.m3u8?${query}&sig=${await this.signer.signPlayback(query)}`;
  }

  workspace = () => this.request<Workspace>('GET', '/workspace');
  ownerSummary = () => this.request<VodStatsSummary>('GET', '/monitoring/vod-stats/owner-summary');
  topAssets = (top = 100) => this.request<VodStatsCollection>('GET', '/monitoring/vod-stats', { query: { top } });
  asset = (assetId: string) => this.request<VodStats>('GET', `/monitoring/vod-stats/${encodeURIComponent(assetId)}`);
  /** Per-minute history of the workspace, or of one asset, over a range ending now. */
  history = (range: HistoryRange, assetId?: string) => this.request<History>('GET', '/monitoring/vod-stats/history', { query: { range, asset_id: assetId } });

  keys = () => this.request<Collection<ApiKey>>('GET', '/workspace/keys');
  /** Each quota of the workspace with what it uses and its limit. */
  usage = () => this.request<WorkspaceUsage>('GET', '/workspace/usage');
  serverSettings = () => this.request<ServerSettings>('GET', '/server');
  createKey = (label: string, kind: 'api' | 'ingest') => this.request<ApiKey>('POST', '/workspace/keys', { body: { label, kind } });
  revokeKey = (keyId: string) => this.request<ApiKey>('DELETE', `/workspace/keys/${encodeURIComponent(keyId)}`);

  shares = () => this.request<Collection<ContentShare>>('GET', '/workspace/shares');
  share = (granteeId: string) => this.request<ContentShare>('PUT', `/workspace/shares/${encodeURIComponent(granteeId)}`);
  unshare = (granteeId: string) => this.request<unknown>('DELETE', `/workspace/shares/${encodeURIComponent(granteeId)}`);

  callbackSettings = () => this.request<CallbackSettings>('GET', '/error-reporting/settings');
  rotateCallbackSecret = () => this.request<CallbackSettings>('POST', '/error-reporting/settings/rotate-secret');
  saveCallback = (callbackUrl: string, enabled: boolean) =>
    this.request<CallbackSettings>('PUT', '/error-reporting/settings', { body: { callback_url: callbackUrl, enabled } });
  testCallback = (callbackUrl: string) => this.request<CallbackTestResult>('POST', '/error-reporting/test', { body: { callback_url: callbackUrl } });
  deliveries = () => this.request<CallbackDeliveries>('GET', '/error-reporting/deliveries');
  deliveryLog = (query: { outcome?: string | undefined; limit?: number; cursor?: string | undefined } = {}) =>
    this.request<LoggedAttemptPage>('GET', '/error-reporting/attempts', { query });
  deliveryAttempt = (attemptId: string) => this.request<LoggedAttemptDetail>('GET', `/error-reporting/attempts/${encodeURIComponent(attemptId)}`);
  resendAttempt = (attemptId: string) => this.request<LoggedAttemptDetail>('POST', `/error-reporting/attempts/${encodeURIComponent(attemptId)}/resend`);
  resumeCallback = () => this.request<CallbackDeliveries>('POST', '/error-reporting/settings/resume');

  targets = () => this.request<Collection<Target>>('GET', '/syndication-target');
  createTarget = (body: NewTarget) => this.request<Target>('POST', '/syndication-target', { body });
  patchTarget = (targetId: string, body: TargetPatch) => this.request<Target>('PATCH', `/syndication-target/${encodeURIComponent(targetId)}`, { body });
  createSchedule = (body: NewSchedule) => this.request<Schedule>('POST', '/syndication-schedule', { body });
  patchSchedule = (scheduleId: string, body: SchedulePatch) => this.request<Schedule>('PATCH', `/syndication-schedule/${encodeURIComponent(scheduleId)}`, { body });
  regions = () => this.request<Collection<Region>>('GET', '/syndication-regions');
  schedules = () => this.request<Collection<Schedule>>('GET', '/syndication-schedule');
  scheduleAction = (scheduleId: string, mode: 'start' | 'stop') =>
    this.request<Schedule>('PATCH', `/syndication-schedule-action/${encodeURIComponent(scheduleId)}`, { body: { mode } });

  /** One page of the asset library, newest first, and the cursor of the next page (from the `Link` header). */
  async assets(limit: number, cursor?: string): Promise<{ page: AssetCollection; next: string | undefined }> {
    const { value, headers } = await this.exchange<AssetCollection>('GET', '/assets', { query: { limit, cursor } });
    const link = /<[^>]*[?&]cursor=([^&>]+)[^>]*>;\s*rel="next"/.exec(headers.get('link') ?? '');
    return { page: value, next: link?.[1] === undefined ? undefined : decodeURIComponent(link[1]) };
  }
  /** The recorded live events of one slicer, newest first. */
  recordings = (slicerId: string) => this.request<AssetCollection>('GET', '/assets', { query: { source_slicer_id: slicerId, limit: 50 } });
  getAsset = (assetId: string) => this.request<Asset>('GET', `/assets/${encodeURIComponent(assetId)}`);
  deleteAsset = (assetId: string) => this.request<unknown>('DELETE', `/assets/${encodeURIComponent(assetId)}`);

  slicers = () => this.request<SlicerCollection>('GET', '/managed-slicer/slicers', { query: { limit: 100 } });
  createSlicer = (body: NewSlicer) => this.request<Slicer>('POST', '/managed-slicer/slicers', { body });
  restartSlicer = (slicerId: string) => this.request<Slicer>('GET', `/managed-slicer/slicers/restart/${encodeURIComponent(slicerId)}`);
  deleteSlicer = (slicerId: string) => this.request<Slicer>('DELETE', `/managed-slicer/slicers/${encodeURIComponent(slicerId)}`);
  rotateSlicerKey = (slicerId: string) => this.request<Slicer>('POST', `/managed-slicer/slicers/${encodeURIComponent(slicerId)}/rotate-stream-key`);

  webhookSubscriptions = () => this.request<WebhookSubscriptionCollection>('GET', '/webhooks/subscriptions');
  createWebhookSubscription = (body: NewWebhookSubscription) => this.request<WebhookSubscriptionWithSecret>('POST', '/webhooks/subscriptions', { body });
  deleteWebhookSubscription = (id: string) => this.request<unknown>('DELETE', `/webhooks/subscriptions/${encodeURIComponent(id)}`);
  setWebhookSubscriptionEnabled = (id: string, enabled: boolean) => this.request<WebhookSubscription>('PATCH', `/webhooks/subscriptions/${encodeURIComponent(id)}`, { body: { enabled } });
  webhookAttempts = (limit = 20) => this.request<WebhookAttemptCollection>('GET', '/webhooks/attempts', { query: { limit } });
  webhookAttempt = (attemptId: string) => this.request<WebhookAttemptDetail>('GET', `/webhooks/attempts/${encodeURIComponent(attemptId)}`);
  rotateWebhookSecret = (id: string) => this.request<WebhookSubscriptionWithSecret>('POST', `/webhooks/subscriptions/${encodeURIComponent(id)}/rotate-secret`);
  resendWebhookAttempt = (attemptId: string) => this.request<unknown>('POST', `/webhooks/attempts/${encodeURIComponent(attemptId)}/resend`);

  slicerTasks = (limit = 50) => this.request<SlicerTaskCollection>('GET', '/managed-slicer/slicers/tasks', { query: { limit } });
}
