import { badSessions, goodSession, type SimulatedViewer } from './simulated-urls.js';

/** Statistics-shaped counts: what the owner summary should show for the traffic sent. */
export interface TrafficTotals {
  requests: number;
  manifest: number;
  ad: number;
  new: number;
  /** Playback error code -> sessions refused with it. */
  errors: Record<string, number>;
}

/** One owner the simulator plays as. */
export interface SimulatedOwner {
  owner: string;
  apiKey: string;
  appKeySecret: string;
  contentOwner: string | null;
  assets: string[];
}

export interface TrafficPlan {
  owners: SimulatedOwner[];
  /** New viewer sessions per second. */
  ratePerS: number;
  durationMs: number;
  /** Share of good sessions that ask for ads (0-1). */
  adShare: number;
  /** Share of all sessions meant to fail with each code. */
  errorShares: ReadonlyMap<number, number>;
  /** Requests in flight at most; sessions wait for room. */
  concurrency: number;
}

/** The side effects a simulation needs: time, randomness and HTTP. */
export interface SimulatorPorts {
  now(): number;
  wait(ms: number): Promise<void>;
  random(): number;
  /** GET a path of the edge; the playback error code is the `x-playback-error-code` header (null when absent); `body` as text. */
  get(path: string): Promise<{ status: number; errorCode: number | null; body: string }>;
}

export interface TrafficProgress {
  elapsedMs: number;
  sessions: number;
  inFlight: number;
  totals: TrafficTotals;
  /** Requests that got no HTTP answer (connection errors): not in the totals. */
  failed: number;
  /**
   * Refusals answered 429 because this client is over the edge's refused-playback limit: not in
   * the totals, since the edge counts nothing for them.
   */
  throttled: number;
}

export interface TrafficReport extends TrafficProgress {
  byOwner: Record<string, TrafficTotals>;
}

export const emptyTotals = (): TrafficTotals => ({ requests: 0, manifest: 0, ad: 0, new: 0, errors: {} });

/** What one viewer session got from the edge, counted the way the statistics count the edge's events. */
interface SessionOutcome {
  /** Playback requests answered (not throttled). */
  requests: number;
  /** Error codes of the refused ones. */
  errors: number[];
  /** The first variant playlist was served (manifest, and a new session). */
  manifest: boolean;
  /** The first ad segment was served. */
  ad: boolean;
}

const addTo = (t: TrafficTotals, o: SessionOutcome): void => {
  t.requests += o.requests;
  for (const code of o.errors) t.errors[String(code)] = (t.errors[String(code)] ?? 0) + 1;
  if (o.manifest) {
    t.manifest += 1;
    t.new += 1;
  }
  if (o.ad) t.ad += 1;
};

/** A URI of a playlist resolved against the playlist's path, as a player resolves it. */
const resolve = (base: string, uri: string): string => {
  const url = new URL(uri, new URL(base, 'http://edge'));
  return `${url.pathname}${url.search}`;
};
const uris = (playlist: string): string[] => playlist.split('\n').map((l) => l.trim()).filter((l) => l.length > 0 && !l.startsWith('#'));

const TICK_MS = 10;
const PROGRESS_EVERY_MS = 1000;

/**
 * Drives viewer sessions through the playback edge at a steady rate: each session picks an
 * owner and asset, then a playback that is good (with ads for `adShare` of them) or meant to
 * fail with one code. A good session then plays like a player starting up: its first variant
 * playlist, its first ad segment (with ads) and its first content segment, which is what the
 * edge counts as manifest, ad and start. Totals are counted from the answers, the way the
 * statistics count the edge's events.
 */
export class TrafficSimulator {
  private readonly totals = emptyTotals();
  private readonly byOwner = new Map<string, TrafficTotals>();
  private sessions = 0;
  private inFlight = 0;
  private failed = 0;
  private throttled = 0;
  private serial = 0;

  constructor(private readonly ports: SimulatorPorts) {}

  async run(plan: TrafficPlan, onProgress?: (p: TrafficProgress) => void): Promise<TrafficReport> {
    if (plan.owners.length === 0) throw new Error('no owners to simulate');
    const started = this.ports.now();
    const running = new Set<Promise<void>>();
    let nextProgress = PROGRESS_EVERY_MS;
    for (;;) {
      const elapsed = this.ports.now() - started;
      if (elapsed >= plan.durationMs) break;
      const due = Math.floor((elapsed / 1000) * plan.ratePerS);
      while (this.sessions < due && this.inFlight < plan.concurrency) {
        const session = this.session(plan);
        running.add(session);
        void session.finally(() => running.delete(session));
      }
      if (onProgress && elapsed >= nextProgress) {
        nextProgress += PROGRESS_EVERY_MS;
        onProgress(this.progress(elapsed));
      }
      await this.ports.wait(TICK_MS);
    }
    while (running.size > 0) await Promise.all([...running]);
    const report = { ...this.progress(this.ports.now() - started), byOwner: Object.fromEntries(this.byOwner) };
    onProgress?.(report);
    return report;
  }

  private progress(elapsedMs: number): TrafficProgress {
    return { elapsedMs, sessions: this.sessions, inFlight: this.inFlight, totals: this.totals, failed: this.failed, throttled: this.throttled };
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.min(items.length - 1, Math.floor(this.ports.random() * items.length))] as T;
  }

  /** The code a new session is meant to fail with, or null for a good one. */
  private intendedCode(shares: ReadonlyMap<number, number>): number | null {
    let u = this.ports.random();
    for (const [code, share] of shares) {
      if (u < share) return code;
      u -= share;
    }
    return null;
  }

  private async session(plan: TrafficPlan): Promise<void> {
    this.sessions += 1;
    this.inFlight += 1;
    try {
      const owner = this.pick(plan.owners);
      const n = ++this.serial;
      const tag = `${n.toString(36)}${Math.floor(this.ports.random() * 1e9).toString(36)}`;
      const viewer: SimulatedViewer = {
        owner: owner.owner,
        apiKey: owner.apiKey,
        appKeySecret: owner.appKeySecret,
        contentOwner: owner.contentOwner,
        assetId: this.pick(owner.assets),
        nowS: Math.floor(this.ports.now() / 1000),
        nonce: tag,
        session: `sim-${tag}`.padEnd(8, '0'),
      };
      const code = this.intendedCode(plan.errorShares);
      const withAd = code === null && this.ports.random() < plan.adShare;
      const urls = code === null ? [goodSession(viewer, withAd)] : (badSessions[code]?.(viewer) ?? [goodSession(viewer, false)]);
      const totals = this.byOwner.get(owner.owner) ?? emptyTotals();
      this.byOwner.set(owner.owner, totals);
      const outcome: SessionOutcome = { requests: 0, errors: [], manifest: false, ad: false };
      for (const url of urls) {
        const answer = await this.fetch(url);
        if (answer === null) continue;
        outcome.requests += 1;
        if (answer.status !== 200) outcome.errors.push(answer.errorCode ?? 999);
        else if (code === null) await this.startPlaying(url, answer.body, withAd, outcome);
      }
      addTo(this.totals, outcome);
      addTo(totals, outcome);
    } finally {
      this.inFlight -= 1;
    }
  }

  /** One GET; null when it got no answer (counted as failed) or was throttled (counted apart). */
  private async fetch(path: string): Promise<{ status: number; errorCode: number | null; body: string } | null> {
    let answer: { status: number; errorCode: number | null; body: string };
    try {
      answer = await this.ports.get(path);
    } catch {
      this.failed += 1;
      return null;
    }
    if (answer.status === 429) {
      this.throttled += 1;
      return null;
    }
    return answer;
  }

  /** What a player fetches to start: the first variant, the first ad segment (with ads), the first content segment. */
  private async startPlaying(url: string, multivariant: string, withAd: boolean, outcome: SessionOutcome): Promise<void> {
    const variantUri = uris(multivariant)[0];
    if (!variantUri) return;
    const variantPath = resolve(url, variantUri);
    const variant = await this.fetch(variantPath);
    if (variant?.status !== 200) return;
    outcome.manifest = true;
    const media = uris(variant.body).map((uri) => resolve(variantPath, uri));
    const firstAd = media.find((path) => path.includes('/a/'));
    if (withAd && firstAd) outcome.ad = (await this.fetch(firstAd))?.status === 200;
    const firstContent = media.find((path) => path.includes('/c/'));
    if (firstContent) await this.fetch(firstContent);
  }
}

/** Sums several totals (e.g. every owner's summary). */
export function sumTotals(all: readonly TrafficTotals[]): TrafficTotals {
  const sum = emptyTotals();
  for (const t of all) {
    sum.requests += t.requests;
    sum.manifest += t.manifest;
    sum.ad += t.ad;
    sum.new += t.new;
    for (const [code, n] of Object.entries(t.errors)) sum.errors[code] = (sum.errors[code] ?? 0) + n;
  }
  return sum;
}
