import { fork, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';

export interface LoadResult {
  requestsPerSec: number;
  /** Response bytes per second (headers and bodies). */
  bytesPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
}

export interface LoadOptions {
  url: string;
  /** Paths (with query) requested in turn; default: the url as given. */
  requests?: { method?: string; path: string; body?: string; headers?: Record<string, string> }[];
  connections?: number;
  pipelining?: number;
  durationS?: number;
}

/** Drives HTTP load with autocannon and returns throughput and latency. */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    connections: options.connections ?? 50,
    pipelining: options.pipelining ?? 1,
    duration: options.durationS ?? Number(process.env.BENCH_DURATION_S ?? 5),
    ...(options.requests ? { requests: options.requests.map((r) => ({ method: (r.method ?? 'GET') as 'GET', path: r.path, ...(r.body ? { body: r.body } : {}), ...(r.headers ? { headers: r.headers } : {}) })) } : {}),
  });
  return {
    requestsPerSec: result.requests.average,
    bytesPerSec: result.throughput.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

/**
 * Runs a bench server in a child process (so the load generator does not share its event
 * loop) and resolves with its URL once it prints `READY <url>`.
 */
export async function startBenchServer(script: string, env: Record<string, string> = {}): Promise<{ url: string; child: ChildProcess; output(): string; stop(): Promise<void> }> {
  const child = fork(script, [], { execArgv: ['--import', 'tsx'], env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /READY (\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`bench server ${script} exited with ${code}: ${out}`)));
  });
  return {
    url,
    child,
    output: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
