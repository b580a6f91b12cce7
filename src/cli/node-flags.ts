/**
 * The Node.js flags the server runs with, wherever it is started: the `playline` executable's
 * `#!` line, `npm start`, the Dockerfile, the systemd unit and the benchmarks' app servers
 * (test/integration/node-flags.test.ts holds them all to this list).
 *
 * `--max-semi-space-size=4`: a young generation of 4 MiB semi-spaces instead of V8's default of up
 * to 16 MiB (32 on some builds). A scavenge's pause is the copying of what survives it; with
 * ingest's batches in flight held as columns (EventColumns) little survives, so small semi-spaces
 * give short, frequent pauses at next to no extra collector time. Measured by `npm run bench --
 * busy-store` (bench/RESULTS.md, 2026-11-26): GC pause p99 under reads and half-capacity ingest
 * 7.1 ms -> 4.1 ms, GET p99 meanwhile 11 -> 9 ms, time in GC 2.2 % -> 2.6 %. V8 fixes the size
 * when the process starts: setting the flag from inside the program has no effect, so it is given
 * on the command line.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4'];

/** Whether this process was started with the server's flags (`playline serve` warns otherwise). */
export const startedWithServerFlags = (execArgv: readonly string[] = process.execArgv, nodeOptions: string = process.env.NODE_OPTIONS ?? ''): boolean => {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)]);
  return SERVER_NODE_FLAGS.every((flag) => given.has(flag));
};
