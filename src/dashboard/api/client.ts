import type { V4Signer } from './sign.js';
import type {
  ApiKey, WorkspaceUsage, CallbackDeliveries, ContentShare, CallbackSettings, CallbackTestResult, Collection, History, HistoryRange, LoggedAttemptDetail, LoggedAttemptPage,
  NewSchedule, NewSlicer, NewTarget, Region, Schedule, SchedulePatch, Slicer, SlicerCollection, SlicerTaskCollection, Target, TargetPatch,
  VodStats, VodStatsCollection, VodStatsSummary, Workspace,
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

  async request<T>(method: string, path: string, options: { query?: Query; body?: unknown } = {}, retried = false): Promise<T> {
    const { msg, sig } = await this.signer.sign(Math.floor((Date.now() + this.skewMs) / 1000));
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined) params.append(key, String(value));
    params.append('msg', msg);
    params.append('sig', sig);
    const init: RequestInit = { method, headers: { accept: 'application/json' }, cache: 'no-store', credentials: 'omit', redirect: 'error' };
    if (options.body !== undefined) {
      init.body = JSON.stringify(options.body);
      init.headers = { accept: 'application/json', 'content-type': 'application/json' };
    }
    let response: Response;
    try {
      response = await fetch(`/api/v4${path}?${params.toString()}`, init);
    } catch (err) {
      throw new ApiProblem(0, 'network_error', `Cannot reach the Playline server (${(err as Error).message}). Is it still running?`, undefined, undefined);
    }
    const text = await response.text();
    if (response.ok) return (text.length > 0 ? JSON.parse(text) : undefined) as T;
    const problem = toProblem(response.status, text, response.headers.get('x-request-id') ?? undefined);
    const serverDate = Date.parse(response.headers.get('date') ?? '');
    if (problem.code === 'timestamp_out_of_range' && !retried && Number.isFinite(serverDate)) {
      this.skewMs = serverDate - Date.now();
      return this.request<T>(method, path, options, true);
    }
    throw problem;
  }

  /**
   * A signed playback URL of one of this workspace's assets (`/play/<id>.m3u8?tc=1&exp&rn&ct&cid&oid[&ad]&sig`),
   * valid for `ttlS`, signed in the page with the signed-in key: no API call, no new privilege.
   */
  async playbackUrl(assetId: string, options: { ttlS?: number; adConfig?: string } = {}): Promise<string> {
    const nonce = Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, '0')).join('');
    const exp = Math.floor((Date.now() + this.skewMs) / 1000) + (options.ttlS ?? 3600);
    const pairs: Array<[string, string]> = [['tc', '1'], ['exp', String(exp)], ['rn', nonce], ['ct', 'a'], ['cid', assetId], ['oid', this.signer.owner]];
    if (options.adConfig) pairs.push(['ad', options.adConfig]);
    const query = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
    return `/play/${encodeURIComponent(assetId)}.m3u8?${query}&sig=${await this.signer.signPlayback(query)}`;
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
  createKey = (label: string, kind: 'api' | 'ingest') => this.request<ApiKey>('POST', '/workspace/keys', { body: { label, kind } });
  revokeKey = (keyId: string) => this.request<ApiKey>('DELETE', `/workspace/keys/${encodeURIComponent(keyId)}`);

  shares = () => this.request<Collection<ContentShare>>('GET', '/workspace/shares');
  share = (granteeId: string) => this.request<ContentShare>('PUT', `/workspace/shares/${encodeURIComponent(granteeId)}`);
  unshare = (granteeId: string) => this.request<unknown>('DELETE', `/workspace/shares/${encodeURIComponent(granteeId)}`);

  callbackSettings = () => this.request<CallbackSettings>('GET', '/error-reporting/settings');
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

  slicers = () => this.request<SlicerCollection>('GET', '/managed-slicer/slicers', { query: { limit: 100 } });
  createSlicer = (body: NewSlicer) => this.request<Slicer>('POST', '/managed-slicer/slicers', { body });
  restartSlicer = (slicerId: string) => this.request<Slicer>('GET', `/managed-slicer/slicers/restart/${encodeURIComponent(slicerId)}`);
  deleteSlicer = (slicerId: string) => this.request<Slicer>('DELETE', `/managed-slicer/slicers/${encodeURIComponent(slicerId)}`);
  rotateSlicerKey = (slicerId: string) => this.request<Slicer>('POST', `/managed-slicer/slicers/${encodeURIComponent(slicerId)}/rotate-stream-key`);

  slicerTasks = (limit = 50) => this.request<SlicerTaskCollection>('GET', '/managed-slicer/slicers/tasks', { query: { limit } });
}
