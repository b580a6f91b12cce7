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
  /** GET a playback path; the playback error code is the `x-playback-error-code` header (null when absent). */
  get(path: string): Promise<{ status: number; errorCode: number | null }>;
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

const addTo = (t: TrafficTotals, status: number, errorCode: number | null, withAd: boolean): void => {
  t.requests += 1;
  if (status === 200) {
    t.manifest += 1;
    t.new += 1;
    if (withAd) t.ad += 1;
  } else {
    const code = String(errorCode ?? 999);
    t.errors[code] = (t.errors[code] ?? 0) + 1;
  }
};

const TICK_MS = 10;
const PROGRESS_EVERY_MS = 1000;

/**
 * Drives viewer sessions through the playback edge at a steady rate: each session picks an
 * owner and asset, then a playback that is good (with ads for `adShare` of them) or meant to
 * fail with one code. Totals are counted from the answers, the way the statistics count events.
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
      for (const url of urls) {
        let answer: { status: number; errorCode: number | null };
        try {
          answer = await this.ports.get(url);
        } catch {
          this.failed += 1;
          continue;
        }
        if (answer.status === 429) {
          this.throttled += 1;
          continue;
        }
        addTo(this.totals, answer.status, answer.errorCode, withAd);
        addTo(totals, answer.status, answer.errorCode, withAd);
      }
    } finally {
      this.inFlight -= 1;
    }
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
