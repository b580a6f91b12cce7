import { mediaRootOf } from '../platform/media/media-root.js';
import { Command, InvalidArgumentError } from 'commander';
import { playbackErrorMeaning } from '../modules/vod-stats/playback-error-codes.js';
import { prepareSimulation, sameTotals, serverTotals, type OwnerCredentials } from '../simulator/simulator-setup.js';
import { TrafficSimulator, type TrafficProgress, type TrafficTotals } from '../simulator/traffic-simulator.js';
import { checkServer } from './server-reach.js';
import { deleteWorkspaces } from './simulate-cleanup.js';

/** `500ms`, `10s`, `2m`, `1h`, or plain seconds, as milliseconds. */
export function parseDurationMs(value: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (!m) throw new InvalidArgumentError('use e.g. 10s, 500ms, 2m');
  return Math.round(Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h']);
}

const number = (min: number, max: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`must be a number from ${min} to ${max}`);
  return n;
};

/** The server's media root when it runs here with the same environment (PLAYLINE_MEDIA_DIR, else <data dir>/media). */
const defaultMediaRoot = (): string => {
  const env = process.env;
  return mediaRootOf({ dataDir: env.PLAYLINE_DATA_DIR || './data', ...(env.PLAYLINE_MEDIA_DIR ? { mediaDir: env.PLAYLINE_MEDIA_DIR } : {}) });
};

const knownCodes = Object.keys(playbackErrorMeaning).map(Number);

/** `110=0.05,104=0.02` -> code shares of all sessions. */
export function parseErrorShares(value: string): Map<number, number> {
  const shares = new Map<number, number>();
  for (const part of value.split(',').filter(Boolean)) {
    const [code, share] = part.split('=');
    const c = Number(code);
    const s = Number(share);
    if (!knownCodes.includes(c)) throw new InvalidArgumentError(`${code} is not a playback error code (${knownCodes.join(', ')})`);
    if (!(s >= 0 && s <= 1)) throw new InvalidArgumentError(`the share of ${code} must be from 0 to 1`);
    shares.set(c, s);
  }
  return shares;
}

const parseCredentials = (value: string): OwnerCredentials[] =>
  value.split(',').filter(Boolean).map((pair) => {
    const at = pair.indexOf(':');
    if (at <= 0) throw new InvalidArgumentError('use owner:key,owner:key');
    return { owner: pair.slice(0, at), key: pair.slice(at + 1) };
  });

const errorsText = (errors: Record<string, number>) =>
  Object.entries(errors).sort(([a], [b]) => Number(a) - Number(b)).map(([c, n]) => `${c}:${n}`).join(' ') || '-';

const totalsText = (t: TrafficTotals) => `requests ${t.requests}  manifest ${t.manifest}  ad ${t.ad}  new ${t.new}  errors ${errorsText(t.errors)}`;

const progressLine = (p: TrafficProgress) => {
  const seconds = p.elapsedMs / 1000;
  const errors = Object.values(p.totals.errors).reduce((a, b) => a + b, 0);
  return `[${seconds.toFixed(1)}s] sessions ${p.sessions} (${(p.sessions / Math.max(seconds, 0.001)).toFixed(1)}/s), in flight ${p.inFlight}, ok ${p.totals.manifest}, errors ${errors}: ${errorsText(p.totals.errors)}`;
};

/** Every workspace a run created: its owners, and the content owner it may have lent itself for code 102. */
const createdOwners = (prepared: Awaited<ReturnType<typeof prepareSimulation>>): string[] => [
  ...new Set([...prepared.credentials.map((c) => c.owner), ...prepared.owners.flatMap((o) => (o.contentOwner === null ? [] : [o.contentOwner]))]),
];

interface SimulateOptions {
  baseUrl: string;
  rate: number;
  duration: number;
  owners: number;
  assets: number;
  adShare: number;
  errorShare: number;
  errors?: Map<number, number>;
  concurrency: number;
  credentials?: OwnerCredentials[];
  adminToken?: string;
  compare: boolean;
  mediaDir: string;
  cleanup?: boolean;
  json?: boolean;
}

/** `playline simulate`: viewer sessions through the playback edge over HTTP, with a live progress line and a summary. */
export function simulateCommand(): Command {
  return new Command('simulate')
    .description('Drive viewer sessions through the playback edge (/play) over HTTP and compare with the owner summary')
    .option('--base-url <url>', 'where the server is', process.env.PLAYLINE_BASE_URL ?? 'http://127.0.0.1:8080')
    .option('--rate <sessions/s>', 'new viewer sessions per second', number(0.1, 100_000), 50)
    .option('--duration <time>', 'how long to run, e.g. 10s, 2m', parseDurationMs, 10_000)
    .option('--owners <n>', 'workspaces to create (with the admin token)', number(1, 1000), 2)
    .option('--assets <n>', 'assets per owner', number(1, 100_000), 20)
    .option('--ad-share <0-1>', 'share of good sessions asking for ads', number(0, 1), 0.3)
    .option('--error-share <0-1>', 'share of sessions with a bad URL, spread evenly over every code', number(0, 1), 0.1)
    .option('--errors <code=share,...>', 'bad URL shares per code instead, e.g. 110=0.05,104=0.02', parseErrorShares)
    .option('--concurrency <n>', 'requests in flight at most', number(1, 10_000), 64)
    .option('--credentials <owner:key,...>', 'use these workspaces instead of creating them')
    .option('--admin-token <token>', 'admin token to create workspaces (default PLAYLINE_ADMIN_TOKEN)')
    .option('--no-compare', 'do not read the owner summaries afterwards')
    .option('--media-dir <dir>', 'the server\'s media root, where the simulated assets are packaged (ffmpeg makes one short clip)', defaultMediaRoot())
    .option('--cleanup', 'delete the workspaces this run created, with their data, at the end (admin token)')
    .option('--json', 'print the summary as JSON')
    .addHelpText('after', `
Fresh workspaces (the default) make the final comparison exact: the owner summary covers the
last 3 minutes, so keep runs under 2 minutes when comparing. Good sessions play like a player
starting up (multivariant and variant playlists, first ad segment, first content segment): their
assets are packaged into the server's media root (--media-dir; one clip made with ffmpeg, then
linked), so run it on the server's machine or against a shared media directory. Example:
  PLAYLINE_ADMIN_TOKEN=... playline simulate --rate 100 --duration 30s --owners 3 --error-share 0.2`)
    .action(async (raw: Omit<SimulateOptions, 'credentials'> & { credentials?: string }) => {
      const opts: SimulateOptions = { ...raw, credentials: raw.credentials ? parseCredentials(raw.credentials) : undefined };
      const baseUrl = opts.baseUrl.replace(/\/+$/, '');
      let shares = opts.errors ?? new Map(knownCodes.map((c) => [c, opts.errorShare / knownCodes.length]));
      const adminToken = opts.adminToken ?? process.env.PLAYLINE_ADMIN_TOKEN;
      if (opts.cleanup && opts.credentials) throw new Error('--cleanup deletes the workspaces a run creates: it cannot be used with --credentials');
      if (opts.cleanup && !adminToken) throw new Error('--cleanup needs the admin token (--admin-token or PLAYLINE_ADMIN_TOKEN)');
      await checkServer(baseUrl);
      const prepared = await prepareSimulation({
        baseUrl,
        ...(opts.credentials ? { credentials: opts.credentials } : {}),
        ...(adminToken ? { adminToken } : {}),
        owners: opts.owners,
        assetsPerOwner: opts.assets,
        needContentOwner: (shares.get(102) ?? 0) > 0,
        mediaRoot: opts.mediaDir,
      });
      if (prepared.owners.some((o) => o.contentOwner === null) && (shares.get(102) ?? 0) > 0) {
        process.stderr.write('simulate: code 102 needs a second workspace; leaving it out\n');
        shares = new Map([...shares].filter(([c]) => c !== 102));
      }
      if ([...shares.values()].reduce((a, b) => a + b, 0) > 1) throw new Error('the error shares add up to more than 1');

      const tty = process.stderr.isTTY === true;
      const simulator = new TrafficSimulator({
        now: () => Date.now(),
        wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        random: Math.random,
        async get(path) {
          const response = await fetch(`${baseUrl}${path}`, { headers: { 'user-agent': 'playline-simulate/0.1' } });
          // Playlists are read (the session's URIs are in them); segments only drained.
          const body = (response.headers.get('content-type') ?? '').includes('mpegurl') ? await response.text() : ((await response.arrayBuffer()), '');
          const code = response.headers.get('x-playback-error-code');
          return { status: response.status, errorCode: code === null ? null : Number(code), body };
        },
      });
      const report = await simulator.run(
        { owners: prepared.owners, ratePerS: opts.rate, durationMs: opts.duration, adShare: opts.adShare, errorShares: shares, concurrency: opts.concurrency },
        (p) => process.stderr.write(tty ? `\r${progressLine(p)}\u001b[K` : `${progressLine(p)}\n`),
      );
      if (tty) process.stderr.write('\n');

      let server: { totals: TrafficTotals; byOwner: Record<string, TrafficTotals>; matches: boolean } | undefined;
      if (opts.compare) {
        // Events become visible within a second of the answer: read until they agree, for a few seconds at most.
        for (let attempt = 0; attempt < 20; attempt++) {
          const read = await serverTotals(baseUrl, prepared.credentials);
          server = { ...read, matches: sameTotals(read.totals, report.totals) };
          if (server.matches) break;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      }
      const summary = {
        duration_s: Math.round(report.elapsedMs) / 1000,
        sessions: report.sessions,
        sessions_per_s: Math.round((report.sessions / (report.elapsedMs / 1000)) * 10) / 10,
        failed_requests: report.failed,
        throttled_requests: report.throttled,
        owners: prepared.credentials.map((c) => c.owner),
        totals: report.totals,
        by_owner: report.byOwner,
        ...(server ? { server: { totals: server.totals, matches: server.matches } } : {}),
        ...(opts.cleanup && adminToken ? { deleted_owners: await deleteWorkspaces(baseUrl, adminToken, createdOwners(prepared)) } : {}),
      };
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
      } else {
        process.stdout.write(`Simulated ${summary.duration_s}s: ${summary.sessions} sessions (${summary.sessions_per_s}/s) over ${summary.owners.length} owners, ${report.failed} requests failed, ${report.throttled} refusals throttled (429)\n`);
        process.stdout.write(`  sent:    ${totalsText(report.totals)}\n`);
        if (server) process.stdout.write(`  server:  ${totalsText(server.totals)}  (owner-summary ${server.matches ? 'matches' : 'DIFFERS'})\n`);
        if (summary.deleted_owners) process.stdout.write(`  cleanup: deleted ${summary.deleted_owners.length} workspaces and their data\n`);
      }
      if (server && !server.matches) process.exitCode = 3;
    });
}
