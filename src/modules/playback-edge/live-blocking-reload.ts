import type { Clock } from '../../platform/clock.js';
import { clientNetworkOf, type ClientNetworkPrefixes } from '../../platform/net/address-class.js';

/**
 * LL-HLS blocking playlist reloads (RFC 8216bis 6.2.5.2): a request for a live media playlist
 * with `_HLS_msn` (and `_HLS_part`) is held until the playlist holds that segment (or part), then
 * answered; after three target durations it is answered 503. Held requests are bounded, so they
 * are no lever for holding the server's sockets: at most `total` at once on the instance and
 * `perNetwork` for one client network (an IPv4 /24, IPv6 /64); more are answered at once (503 and
 * 429 with Retry-After). Every request held on one playlist shares one read of it per poll
 * (`pollMs`, on the injected clock), so a thousand players of a stream cost what one does.
 */

/** What a blocking request asks for: segment `msn` complete, or its part `part` there. */
export interface ReloadTarget {
  msn: number;
  part: number | undefined;
}

/** The live edge of a media playlist: the first msn not complete yet, its parts so far, the target duration. */
export interface PlaylistEdge {
  nextMsn: number;
  openParts: number;
  targetDurationS: number;
}

/** Reads the live edge of a media playlist from its text (no full parse: a playlist is read on every poll). */
export function playlistEdgeOf(text: string): PlaylistEdge {
  let first = 0;
  let complete = 0;
  let openParts = 0;
  let targetDurationS = 2;
  let inf = false;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#EXT-X-MEDIA-SEQUENCE:')) first = Number(line.slice(22)) || 0;
    else if (line.startsWith('#EXT-X-TARGETDURATION:')) targetDurationS = Number(line.slice(22)) || targetDurationS;
    else if (line.startsWith('#EXT-X-PART:')) openParts++;
    else if (line.startsWith('#EXTINF')) inf = true;
    else if (line !== '' && !line.startsWith('#') && inf) {
      complete++;
      openParts = 0;
      inf = false;
    }
  }
  return { nextMsn: first + complete, openParts, targetDurationS };
}

/** Whether a playlist's edge satisfies a blocking request. */
export const reached = (edge: PlaylistEdge, want: ReloadTarget): boolean =>
  want.msn < edge.nextMsn || (want.part !== undefined && want.msn === edge.nextMsn && want.part < edge.openParts);

/** `_HLS_msn` / `_HLS_part` of a playlist request: none, a target, or why they are not valid. */
export function reloadTargetOf(query: URLSearchParams): ReloadTarget | undefined | string {
  const msn = query.get('_HLS_msn');
  const part = query.get('_HLS_part');
  if (msn === null) return part === null ? undefined : '_HLS_part needs _HLS_msn';
  const number = /^\d{1,16}$/.test(msn) ? Number(msn) : NaN;
  if (!Number.isSafeInteger(number)) return '_HLS_msn must be a media sequence number';
  if (part === null) return { msn: number, part: undefined };
  if (!/^\d{1,4}$/.test(part)) return '_HLS_part must be a part index';
  return { msn: number, part: Number(part) };
}

export type HoldResult<T> =
  | { kind: 'ready'; value: T }
  /** Not there within the time limit (or the request went away). */
  | { kind: 'timeout' }
  /** The thing waited on is gone (the playlist was removed). */
  | { kind: 'gone' }
  /** Not held: too many held on the instance (`total`) or from this client network (`network`). */
  | { kind: 'full'; scope: 'total' | 'network' };

export interface BlockingReloadLimits {
  total: number;
  perNetwork: number;
  prefixes: ClientNetworkPrefixes;
  /** Default 50 ms. */
  pollMs?: number;
}

interface Waiter<T> {
  ready: (value: T) => boolean;
  settle: (result: HoldResult<T>) => void;
}

interface Watch<T> {
  read: () => Promise<T | undefined>;
  waiters: Set<Waiter<T>>;
  stopPolling: (() => void) | undefined;
}

export class BlockingReloads {
  private held = 0;
  private readonly byNetwork = new Map<string, number>();
  private readonly watches = new Map<string, Watch<unknown>>();

  constructor(
    private readonly clock: Clock,
    private readonly limits: BlockingReloadLimits,
  ) {}

  /** Requests held now (metrics, tests). */
  get holding(): number {
    return this.held;
  }

  /**
   * Holds until `read()` (shared by every request on `key`) gives a value `ready` accepts, for at
   * most `timeoutMs`, or until `signal` aborts (the client went away).
   */
  hold<T>(key: string, clientIp: string, read: () => Promise<T | undefined>, ready: (value: T) => boolean, timeoutMs: number, signal?: AbortSignal): Promise<HoldResult<T>> {
    if (this.held >= this.limits.total) return Promise.resolve({ kind: 'full', scope: 'total' });
    const network = clientNetworkOf(clientIp, this.limits.prefixes);
    const fromNetwork = this.byNetwork.get(network) ?? 0;
    if (fromNetwork >= this.limits.perNetwork) return Promise.resolve({ kind: 'full', scope: 'network' });
    this.held++;
    this.byNetwork.set(network, fromNetwork + 1);
    let watch = this.watches.get(key) as Watch<T> | undefined;
    if (!watch) {
      watch = { read, waiters: new Set(), stopPolling: undefined };
      this.watches.set(key, watch as Watch<unknown>);
    }
    const current = watch;
    return new Promise<HoldResult<T>>((resolve) => {
      let done = false;
      const cancelTimer = this.clock.setTimer(() => waiter.settle({ kind: 'timeout' }), timeoutMs);
      const onAbort = () => waiter.settle({ kind: 'timeout' });
      const waiter: Waiter<T> = {
        ready,
        settle: (result) => {
          if (done) return;
          done = true;
          cancelTimer();
          signal?.removeEventListener('abort', onAbort);
          current.waiters.delete(waiter);
          if (current.waiters.size === 0) {
            current.stopPolling?.();
            current.stopPolling = undefined;
            if (this.watches.get(key) === current) this.watches.delete(key);
          }
          this.held--;
          const left = (this.byNetwork.get(network) ?? 1) - 1;
          if (left <= 0) this.byNetwork.delete(network);
          else this.byNetwork.set(network, left);
          resolve(result);
        },
      };
      current.waiters.add(waiter);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.schedule(current);
    });
  }

  private schedule<T>(watch: Watch<T>): void {
    if (watch.stopPolling || watch.waiters.size === 0) return;
    watch.stopPolling = this.clock.setTimer(() => {
      watch.stopPolling = undefined;
      void this.poll(watch);
    }, this.limits.pollMs ?? 50);
  }

  private async poll<T>(watch: Watch<T>): Promise<void> {
    let value: T | undefined;
    try {
      value = await watch.read();
    } catch {
      value = undefined;
    }
    for (const waiter of [...watch.waiters]) {
      if (value === undefined) waiter.settle({ kind: 'gone' });
      else if (waiter.ready(value)) waiter.settle({ kind: 'ready', value });
    }
    this.schedule(watch);
  }
}
