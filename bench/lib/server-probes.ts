/**
 * Measurements taken inside a bench server while a load runs: GC pauses (PerformanceObserver
 * 'gc') and event-loop delay (monitorEventLoopDelay), as p99 in ms, and the heap after a full
 * collection (the server runs with --expose-gc).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { PerformanceObserver, constants, monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export interface ProbeResult {
  gcPauses: number;
  /** Pauses by kind: scavenges (young generation) and mark-compacts (whole heap). */
  minorPauses: number;
  minorP99Ms: number;
  majorPauses: number;
  majorP99Ms: number;
  gcP99Ms: number;
  gcMaxMs: number;
  gcTotalMs: number;
  eventLoopDelayP99Ms: number;
  eventLoopDelayMaxMs: number;
  seconds: number;
}

const p99 = (values: number[]): number => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] as number;
};

export class ServerProbes {
  private pauses: number[] = [];
  private minor: number[] = [];
  private major: number[] = [];
  private observer: PerformanceObserver | undefined;
  private delay: IntervalHistogram | undefined;
  private startedAt = 0;

  start(): void {
    this.stop();
    this.pauses = [];
    this.minor = [];
    this.major = [];
    this.observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        this.pauses.push(entry.duration);
        const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind;
        if (kind === constants.NODE_PERFORMANCE_GC_MINOR) this.minor.push(entry.duration);
        else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) this.major.push(entry.duration);
      }
    });
    this.observer.observe({ entryTypes: ['gc'] });
    this.delay = monitorEventLoopDelay({ resolution: 10 });
    this.delay.enable();
    this.startedAt = performance.now();
  }

  stop(): ProbeResult {
    this.observer?.disconnect();
    this.delay?.disable();
    const delay = this.delay;
    this.observer = undefined;
    this.delay = undefined;
    return {
      gcPauses: this.pauses.length,
      minorPauses: this.minor.length,
      minorP99Ms: p99(this.minor),
      majorPauses: this.major.length,
      majorP99Ms: p99(this.major),
      gcP99Ms: p99(this.pauses),
      gcMaxMs: this.pauses.reduce((m, v) => Math.max(m, v), 0),
      gcTotalMs: this.pauses.reduce((s, v) => s + v, 0),
      eventLoopDelayP99Ms: delay ? delay.percentile(99) / 1e6 : 0,
      eventLoopDelayMaxMs: delay ? delay.max / 1e6 : 0,
      seconds: (performance.now() - this.startedAt) / 1000,
    };
  }
}

/** Heap used after two full collections (needs --expose-gc), in bytes. */
export const heapAfterGc = (): number => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

/**
 * An inspector session that records between `start` and `stop` (a V8 profiler), so what it
 * holds is the load only, not the server's start; `stop` writes the profile as JSON to `file`.
 */
abstract class InspectorRecording {
  private session: Session | undefined;

  /** Enables and starts the profiler on the session. */
  protected abstract begin(session: Session): Promise<void>;
  /** Stops it and returns its profile. */
  protected abstract end(session: Session): Promise<object>;

  async start(): Promise<void> {
    const session = new Session();
    session.connect();
    this.session = session;
    await this.begin(session);
  }

  async stop(file: string): Promise<string> {
    const session = this.session;
    if (!session) throw new Error('no recording running');
    const profile = await this.end(session);
    session.disconnect();
    this.session = undefined;
    writeFileSync(file, JSON.stringify(profile));
    return file;
  }
}

/** V8's CPU profiler (what --cpu-prof runs): a .cpuprofile (Chrome DevTools). */
export class CpuProfile extends InspectorRecording {
  protected async begin(session: Session): Promise<void> {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }

  protected async end(session: Session): Promise<object> {
    return (await session.post('Profiler.stop')).profile;
  }
}

/**
 * V8's sampling heap profiler: a .heapprofile (Chrome DevTools) of the objects allocated while it
 * ran that were still alive or outlived the young generation (collected by a major GC, not by a
 * scavenge): what the scavenges copied and promoted, by allocation site.
 */
export class HeapSampling extends InspectorRecording {
  protected async begin(session: Session): Promise<void> {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', { samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false });
  }

  protected async end(session: Session): Promise<object> {
    return (await session.post('HeapProfiler.stopSampling')).profile;
  }
}
