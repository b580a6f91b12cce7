import { PlaylineApiError, PlaylineClient } from '../client/index.js';
import { placeSimulatedMedia } from './simulated-media.js';
import { SIM } from './simulated-urls.js';
import { emptyTotals, sumTotals, type SimulatedOwner, type TrafficTotals } from './traffic-simulator.js';

export interface OwnerCredentials {
  owner: string;
  key: string;
}

export interface SimulatorSetupInput {
  baseUrl: string;
  /** Given workspaces; otherwise `owners` fresh ones are created with the admin token. */
  credentials?: OwnerCredentials[];
  adminToken?: string;
  owners: number;
  assetsPerOwner: number;
  /** Make sure some other workspace keeps `sim-private` private (needed for code 102). */
  needContentOwner: boolean;
  /**
   * The server's media root (`PLAYLINE_MEDIA_DIR`, else `<data dir>/media`): the simulated assets
   * and the ad are packaged there (one clip generated with ffmpeg, then linked), since the
   * edge plays only packaged assets.
   */
  mediaRoot: string;
  ffmpeg?: string;
}

export interface PreparedSimulation {
  owners: SimulatedOwner[];
  credentials: OwnerCredentials[];
}

const adminFetch = async (baseUrl: string, token: string, path: string, body: unknown): Promise<Record<string, unknown>> => {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const parsed = (await response.json()) as Record<string, unknown>;
  if (response.status !== 201) throw new Error(`${path} answered ${response.status}: ${String(parsed.detail ?? '')}`);
  return parsed;
};

/** A fresh workspace and API key through the admin API. */
export async function createSimulatedWorkspace(baseUrl: string, adminToken: string, name: string): Promise<OwnerCredentials> {
  const workspace = await adminFetch(baseUrl, adminToken, '/api/v4/admin/workspaces', { name });
  const id = String(workspace.id);
  const key = await adminFetch(baseUrl, adminToken, `/api/v4/admin/workspaces/${id}/keys`, { label: 'playline simulate' });
  return { owner: id, key: String(key.secret) };
}

const clientOf = (baseUrl: string, c: OwnerCredentials) => new PlaylineClient({ baseUrl, owner: c.owner, apiKey: c.key });

/** The catalogue entries the simulated error codes rely on (ads play `adAssetId`); returns the `sim-app` v1 secret. */
export async function prepareCatalogue(client: PlaylineClient, adAssetId: string): Promise<string> {
  const p = client.playback;
  await p.putAdConfig(SIM.adReady, { ad_server_url: 'https://ads.example.com/vast', ad_asset_ids: [adAssetId], simulated_latency_ms: 15, timeout_ms: 2000 });
  await p.putAdConfig(SIM.adDraft, {});
  await p.putAdConfig(SIM.adSlow, { ad_server_url: 'https://slow-ads.example.com/vast', ad_asset_ids: [adAssetId], simulated_latency_ms: 1500, timeout_ms: 150 });
  await p.putDrmPolicy(SIM.drmOk, { provider: 'widevine', settings: { security_level: 1, hdcp: 'type1' } });
  await p.putDrmPolicy(SIM.drmRejected, { provider: 'fairplay', settings: { security_level: 3000 } });
  await p.putPrivateAsset(SIM.privateAsset, []);
  try {
    await p.deleteAppKey(SIM.appKey);
  } catch (err) {
    if (!(err instanceof PlaylineApiError && err.status === 404)) throw err;
  }
  return String((await p.createAppKey(SIM.appKey)).secret);
}

/**
 * Gets the owners ready: creates workspaces (admin token) or uses the ones given, packages
 * their assets and ad into the media root, and puts the ad configurations, DRM policies,
 * application key and private asset the error codes need into each catalogue (public API).
 */
export async function prepareSimulation(input: SimulatorSetupInput): Promise<PreparedSimulation> {
  let credentials = input.credentials ?? [];
  if (credentials.length === 0) {
    if (!input.adminToken) throw new Error('Pass --credentials owner:key,... or an admin token (PLAYLINE_ADMIN_TOKEN) to create workspaces');
    credentials = [];
    for (let i = 0; i < input.owners; i++) credentials.push(await createSimulatedWorkspace(input.baseUrl, input.adminToken, `simulated owner ${i + 1}`));
  }
  const media = await placeSimulatedMedia({ root: input.mediaRoot, owners: credentials.map((c) => c.owner), assetsPerOwner: input.assetsPerOwner, ...(input.ffmpeg ? { ffmpeg: input.ffmpeg } : {}) });
  const appSecrets: string[] = [];
  for (const c of credentials) appSecrets.push(await prepareCatalogue(clientOf(input.baseUrl, c), media.adOf(c.owner)));
  let lender: string | null = null;
  if (credentials.length === 1 && input.needContentOwner && input.adminToken) {
    const extra = await createSimulatedWorkspace(input.baseUrl, input.adminToken, 'simulated content owner');
    await clientOf(input.baseUrl, extra).playback.putPrivateAsset(SIM.privateAsset, []);
    lender = extra.owner;
  }
  const owners = credentials.map((c, i): SimulatedOwner => ({
    owner: c.owner,
    apiKey: c.key,
    appKeySecret: appSecrets[i] ?? '',
    contentOwner: credentials.length > 1 ? (credentials[(i + 1) % credentials.length]?.owner ?? null) : lender,
    assets: media.assetsOf(c.owner),
  }));
  return { owners, credentials };
}

/** What the server's owner summaries say, summed over the owners (statistics of the last 3 minutes). */
export async function serverTotals(baseUrl: string, credentials: readonly OwnerCredentials[]): Promise<{ totals: TrafficTotals; byOwner: Record<string, TrafficTotals> }> {
  const byOwner: Record<string, TrafficTotals> = {};
  for (const c of credentials) {
    const summary = await clientOf(baseUrl, c).vodStats.summary();
    const t = emptyTotals();
    Object.assign(t, summary.stats.sessions);
    t.errors = { ...summary.stats.errors };
    byOwner[c.owner] = t;
  }
  return { totals: sumTotals(Object.values(byOwner)), byOwner };
}

/** Totals compared field by field (error codes with 0 sessions equal missing ones). */
export function sameTotals(a: TrafficTotals, b: TrafficTotals): boolean {
  if (a.requests !== b.requests || a.manifest !== b.manifest || a.ad !== b.ad || a.new !== b.new) return false;
  const codes = new Set([...Object.keys(a.errors), ...Object.keys(b.errors)]);
  return [...codes].every((c) => (a.errors[c] ?? 0) === (b.errors[c] ?? 0));
}
