/**
 * `npm run bench [-- name ...]`: runs each benchmark with its baseline in the same run and
 * prints both and the ratio. BENCH_DURATION_S sets the seconds per HTTP load (default 5).
 */
import os from 'node:os';
import { authBenchmark } from './auth.bench.js';
import { callbacksBenchmark } from './callbacks.bench.js';
import { ingestBenchmark } from './ingest.bench.js';
import { busyStoreBenchmark } from './busy-store.bench.js';
import { vodStatsBenchmark } from './vod-stats.bench.js';
import { syndicationBenchmark } from './syndication.bench.js';
import { playbackEdgeBenchmark } from './playback-edge.bench.js';
import { mediaBenchmark } from './media.bench.js';
import { clusterBenchmark } from './cluster.bench.js';
import { soakBenchmark } from './soak.bench.js';
import { liveLatencyBenchmark } from './live-latency.bench.js';
import { timeToPlayBenchmark } from './time-to-play.bench.js';
import { printComparison, type Benchmark } from './lib/report.js';

const benchmarks: Benchmark[] = [
  authBenchmark,
  syndicationBenchmark,
  callbacksBenchmark,
  ingestBenchmark,
  busyStoreBenchmark,
  vodStatsBenchmark,
  playbackEdgeBenchmark,
  mediaBenchmark,
  clusterBenchmark,
  soakBenchmark,
  liveLatencyBenchmark,
  timeToPlayBenchmark,
];

const wanted = process.argv.slice(2);
const selected = wanted.length > 0 ? benchmarks.filter((b) => wanted.includes(b.name)) : benchmarks.filter((b) => !b.optIn);
if (selected.length === 0) {
  process.stderr.write(`No benchmark named ${wanted.join(', ')}. Known: ${benchmarks.map((b) => b.name).join(', ')}\n`);
  process.exit(2);
}

process.stdout.write(`Playline benchmarks, ${new Date().toISOString()}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), node ${process.version}\n`);
for (const benchmark of selected) {
  process.stdout.write(`\n[${benchmark.name}] ${benchmark.description}\n`);
  for (const comparison of await benchmark.run()) printComparison(comparison);
}
