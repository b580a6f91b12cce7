import type { AssetStats, HistoryPoint, LatencySummary, OwnerSummary, WindowStats } from './store/stats-store.js';
import { isoMicros } from './stats-window.js';
import type { StatsHistory } from './vod-stats.service.js';
import type {
  HistoryPointBody, StatsBody, VodStatsBody, VodStatsCollectionBody, VodStatsHistoryBody, VodStatsSummaryBody,
} from './vod-stats.schema.js';

export const VOD_STATS_PATH = '/api/v4/monitoring/vod-stats';

const round3 = (value: number): number => Math.round(value * 1000) / 1000;

/**
 * Mean, min and max of samples as the API shows them: all three rounded to 3 decimals (rounding
 * is monotonic, so a mean between min and max stays between them), and the mean then clamped
 * into [min, max], because sum / count can land a hair outside them in floating point (three
 * 0.1 ms samples: 0.10000000000000002) right at a rounding boundary. Both stores keep exact
 * min/max/sum/count; this is the one place that turns them into numbers.
 */
const sampleStats = (l: LatencySummary): { mean_ms: number; min_ms: number; max_ms: number } => {
  const min = round3(l.min);
  const max = round3(l.max);
  return { mean_ms: Math.min(max, Math.max(min, round3(l.sum / l.count))), min_ms: min, max_ms: max };
};

/** A kind without any sample renders as zeros: `latency.manifest` is always present. */
const latencyBody = (l: LatencySummary) => (l.count === 0 ? { mean_ms: 0, min_ms: 0, max_ms: 0 } : sampleStats(l));

export const statsBody = (s: WindowStats): StatsBody => {
  const errors: Record<string, number> = {};
  for (const [code, sessions] of s.errors) errors[String(code)] = sessions;
  const latency: StatsBody['latency'] = { manifest: latencyBody(s.manifestLatency) };
  if (s.adLatency.count > 0) latency.ad = latencyBody(s.adLatency);
  return {
    type: 'vod',
    version: 1,
    errors,
    latency,
    sessions: { requests: s.requests, manifest: s.manifest, ad: s.ad, new: s.new },
  };
};

export const vodStatsBody = (a: AssetStats): VodStatsBody => ({
  '@id': `${VOD_STATS_PATH}/${encodeURIComponent(a.assetId)}`,
  '@type': 'VodStats',
  id: a.assetId,
  stats: statsBody(a.stats),
  ts: a.ts,
  ts_iso: isoMicros(a.ts),
});

export const vodStatsSummaryBody = (s: OwnerSummary): VodStatsSummaryBody => ({
  '@id': `${VOD_STATS_PATH}/owner-summary/${encodeURIComponent(s.owner)}`,
  '@type': 'VodStatsSummary',
  stats: statsBody(s.stats),
  owner: s.owner,
  ts: s.ts,
  ts_iso: isoMicros(s.ts),
});

const rendered = new WeakMap<AssetStats, string>();

/**
 * VodStats as JSON text, exactly `JSON.stringify(vodStatsBody(a))`. The store hands out the same
 * AssetStats object while an asset is unchanged, so repeated reads render it once.
 */
export const vodStatsJson = (a: AssetStats): string => {
  let json = rendered.get(a);
  if (json === undefined) {
    json = JSON.stringify(vodStatsBody(a));
    rendered.set(a, json);
  }
  return json;
};

/** A Collection of VodStats as JSON text, exactly `JSON.stringify(vodStatsCollectionBody(...))`. */
export const vodStatsCollectionJson = (selfPath: string, items: readonly AssetStats[]): string =>
  `{"@id":${JSON.stringify(selfPath)},"@type":"Collection","items":[${items.map(vodStatsJson).join(',')}],"total_items":${items.length}}`;

/** A Collection of VodStats; `selfPath` is the path that was called (without the query string). */
export const vodStatsCollectionBody = (selfPath: string, items: readonly AssetStats[]): VodStatsCollectionBody => ({
  '@id': selfPath,
  '@type': 'Collection',
  items: items.map(vodStatsBody),
  total_items: items.length,
});

const historyLatency = (l: LatencySummary): HistoryPointBody['latency']['manifest'] =>
  l.count === 0
    ? { samples: 0, mean_ms: 0, min_ms: 0, max_ms: 0 }
    : { samples: l.count, ...sampleStats(l) };

/** Startup has no min: its mean and max as latencies are (a min of 0 bounds nothing). */
const startupBody = (s: HistoryPoint['startup']): HistoryPointBody['startup'] => {
  const { mean_ms, max_ms } = sampleStats({ ...s, min: 0 });
  return { samples: s.count, mean_ms, max_ms };
};

/** One minute of history as the API shows it. */
export const historyPointBody = (p: HistoryPoint): HistoryPointBody => {
  const errors: Record<string, number> = {};
  let errorSessions = 0;
  for (const [code, sessions] of p.stats.errors) {
    errors[String(code)] = sessions;
    errorSessions += sessions;
  }
  const base = Math.max(p.stats.requests, errorSessions);
  return {
    ts: p.ts,
    ts_iso: isoMicros(p.ts),
    sessions: { requests: p.stats.requests, manifest: p.stats.manifest, ad: p.stats.ad, new: p.stats.new },
    errors,
    error_sessions: errorSessions,
    error_rate: base === 0 ? null : Math.round((errorSessions / base) * 10_000) / 10_000,
    latency: { manifest: historyLatency(p.stats.manifestLatency), ad: historyLatency(p.stats.adLatency) },
    rebuffers: p.rebuffers,
    startup: p.startup.count === 0
      ? { samples: 0, mean_ms: 0, max_ms: 0 }
      : startupBody(p.startup),
  };
};

export const vodStatsHistoryBody = (h: StatsHistory): VodStatsHistoryBody => ({
  '@id': `${VOD_STATS_PATH}/history`,
  '@type': 'VodStatsHistory',
  owner: h.owner,
  asset_id: h.assetId,
  from: h.from,
  to: h.to,
  step_s: 60,
  points: h.points.map(historyPointBody),
  total_points: h.points.length,
});
