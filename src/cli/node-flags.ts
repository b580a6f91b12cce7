import { setFlagsFromString } from 'node:v8';

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

/**
 * V8 settings the server gives itself as it starts (`playline serve`, and the benchmarks' app
 * servers), however it was started: unlike the semi-space size these are read at every
 * collection, so setting them at run time takes effect (and V8 refuses them in NODE_OPTIONS).
 *
 * `--heap-growing-percent=60`: after a full collection the old generation may grow to 1.6× what
 * survived before the next one starts, instead of the factor V8 picks by itself (up to 4× when the
 * collector looks fast next to the program). Under steady ingest the server promotes a steady
 * trickle of short-lived objects; with V8's own factor they piled up to 2–3× the live heap between
 * full collections and the process's RSS swung with them. 12-minute soak (bench/RESULTS.md,
 * 2026-11-27): V8 heap 113–302 MiB used and RSS 336–484 MiB at the minute marks by default, against
 * 73–90 MiB and 263–302 MiB at 30 %. The price is more full collections: at 30 % two fell in
 * busy-store's read window (GC pause p99 8.8 and 9.5 ms, each full collection's pause ~10 ms), at
 * 60 % one (p99 5.9 and 3.4 ms, scavenges setting it).
 */
export const SERVER_V8_SETTINGS: readonly string[] = ['--heap-growing-percent=60'];

/** Applies SERVER_V8_SETTINGS to this process. */
export const applyServerV8Settings = (): void => {
  for (const setting of SERVER_V8_SETTINGS) setFlagsFromString(setting);
};
