import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import autocannon from 'autocannon';
import { SERVER_NODE_FLAGS } from '../../src/cli/node-flags.js';

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
  /** Requests per second over all connections (a steady load instead of as fast as possible). */
  overallRate?: number;
}

/** Drives HTTP load with autocannon and returns throughput and latency. */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    connections: options.connections ?? 50,
    pipelining: options.pipelining ?? 1,
    duration: options.durationS ?? Number(process.env.BENCH_DURATION_S ?? 5),
    ...(options.overallRate !== undefined ? { overallRate: options.overallRate } : {}),
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

export interface BenchServer {
  url: string;
  child: ChildProcess;
  /** Lines the server announced (READY, CREDENTIALS, ...). */
  output(): string;
  /** The file the server's stdout (its log) goes to. */
  logFile: string;
  /** Bytes of log written so far. */
  logBytes(): number;
  /** Sends a command to the server (see bench/lib/bench-ipc.ts) and resolves with its answer. */
  command<T = unknown>(command: string, arg?: unknown): Promise<T>;
  stop(): Promise<void>;
}

export interface BenchServerOptions {
  /** Node flags of the server process (e.g. --expose-gc, --cpu-prof). */
  execArgv?: string[];
}

/** Where bench servers' logs go (BENCH_LOG_DIR, default a directory under the temp dir). */
export const benchLogDir = (): string => {
  const dir = process.env.BENCH_LOG_DIR ?? join(tmpdir(), 'playline-bench-logs');
  mkdirSync(dir, { recursive: true });
  return dir;
};

let serverSeq = 0;

/**
 * Runs a bench server in a child process (so the load generator does not share its event loop)
 * and resolves once it announces `READY <url>` over IPC. Its stdout, the log, goes to a file as
 * an operator would redirect it (BENCH_LOG_DIR); stderr is inherited.
 */
export async function startBenchServer(script: string, env: Record<string, string> = {}, options: BenchServerOptions = {}): Promise<BenchServer> {
  const logFile = join(benchLogDir(), `${basename(script, '.ts')}-${env.BENCH_SERVER ?? 'server'}-${process.pid}-${++serverSeq}.log`);
  const logFd = openSync(logFile, 'w');
  // BENCH_APP_NODE_FLAGS: extra Node/V8 flags for the app servers only (to compare V8 settings; the baselines keep the defaults).
  // The app runs with the server's own Node flags, as every way of starting it gives them; BENCH_APP_NODE_FLAGS adds (or overrides) some.
  const appFlags = env.BENCH_SERVER === 'app' || env.BENCH_SERVER === undefined ? [...SERVER_NODE_FLAGS, ...(process.env.BENCH_APP_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '')] : [];
  const child = fork(script, [], { execArgv: ['--import', 'tsx', ...appFlags, ...(options.execArgv ?? [])], env: { ...process.env, ...env }, stdio: ['ignore', logFd, 'inherit', 'ipc'] });
  closeSync(logFd);
  let out = '';
  let nextId = 0;
  const waiting = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  const url = await new Promise<string>((resolve, reject) => {
    child.on('message', (message: { line?: string; id?: number; result?: unknown; error?: string }) => {
      if (message.line !== undefined) {
        out += `${message.line}\n`;
        const match = /READY (\S+)/.exec(message.line);
        if (match?.[1]) resolve(match[1]);
      } else if (message.id !== undefined) {
        const w = waiting.get(message.id);
        waiting.delete(message.id);
        if (message.error !== undefined) w?.reject(new Error(message.error));
        else w?.resolve(message.result);
      }
    });
    child.once('exit', (code) => {
      for (const w of waiting.values()) w.reject(new Error(`bench server ${script} exited with ${code}`));
      reject(new Error(`bench server ${script} exited with ${code}: ${out}`));
    });
  });
  return {
    url,
    child,
    output: () => out,
    logFile,
    logBytes: () => statSync(logFile).size,
    command: <T>(command: string, arg?: unknown) =>
      new Promise<T>((resolve, reject) => {
        const id = ++nextId;
        waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
        child.send({ id, command, arg });
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** A load with the server's CPU time over it (`cpu` command): CPU per request moves less than throughput on a shared machine. */
export async function loadWithCpu(server: BenchServer, options: LoadOptions): Promise<LoadResult & { cpuUsPerRequest: number; systemUsPerRequest: number }> {
  const before = await server.command<NodeJS.CpuUsage>('cpu-split');
  const result = await load(options);
  const after = await server.command<NodeJS.CpuUsage>('cpu-split');
  const requests = Math.max(1, result.requestsPerSec * (options.durationS ?? Number(process.env.BENCH_DURATION_S ?? 5)));
  const system = after.system - before.system;
  return { ...result, cpuUsPerRequest: (after.user - before.user + system) / requests, systemUsPerRequest: system / requests };
}
