import type { PlaybackEvent, PlaybackEventType } from './events.schema.js';
import { sessionHash } from './session-hash.js';

/** Event types as small integers (the `type` column). */
export const TYPE = { request: 0, manifest: 1, ad: 2, start: 3, error: 4, rebuffer: 5 } as const;
export const TYPE_NAMES: readonly PlaybackEventType[] = ['request', 'manifest', 'ad', 'start', 'error', 'rebuffer'];

/** What an error event carries for Error Reporting beyond the columns; absent members are undefined. */
export interface ErrorDetails {
  http_status: number | undefined;
  url: string | undefined;
  ip: string | undefined;
  ua: string | undefined;
  msg: string | undefined;
}

const WORKSPACE_ONLY = 1;
const FIRST_CAPACITY = 256;

/**
 * Where a batch finds the long-lived copy of an id it names: the store that will count it (its
 * own keys), so a batch in flight holds references to strings the collector has long promoted,
 * not the strings each event's decoding made, at no memory of its own. An id the store does not
 * hold yet is kept as decoded.
 */
export interface IdTable {
  ownerId(owner: string): string;
  assetId(owner: string, assetId: string): string;
}
const AS_DECODED: IdTable = { ownerId: (owner) => owner, assetId: (_owner, assetId) => assetId };

/**
 * A batch of accepted events held column by column (DESIGN §9, issue 18): typed arrays for the
 * numbers, the store's own copies of the ids (IdTable), a session as the 53-bit hash the dedupe marks use. A batch waiting
 * between its parse and its counting is a dozen objects whatever its size, so a scavenge under
 * ingest has next to nothing to copy (an object and three strings per event did: the GC pauses
 * and the RSS swings of the busy-store and soak benchmarks). Error Reporting's texts are kept
 * for error events only. `sessionIds` keeps the ids themselves when a consumer needs them (the
 * cluster's Redis store counts by id).
 */
export class EventColumns {
  length = 0;
  type: Uint8Array;
  flags: Uint8Array;
  ts: Float64Array;
  /** sessionHash(session_id). */
  session: Float64Array;
  /** latency_ms of manifest and ad events, startup_ms of start events; NaN when absent. */
  value: Float64Array;
  /** The error code of error events (0 for other types). */
  code: Uint16Array;
  /** Where each event was in its batch (NDJSON line, JSON array position). */
  index: Int32Array;
  owner: string[] = [];
  asset: string[] = [];
  /** Error details by position, error events carrying any only. */
  details: Map<number, ErrorDetails> | null = null;
  /** The session ids themselves, when asked for at construction. */
  readonly sessionIds: string[] | null;
  /** The distinct workspaces named, in order of first appearance. */
  readonly owners: string[] = [];
  private lastOwner: string | undefined;
  private readonly ids: IdTable;

  constructor(options: { capacity?: number; keepSessionIds?: boolean; ids?: IdTable } = {}) {
    const capacity = Math.max(1, options.capacity ?? FIRST_CAPACITY);
    this.type = new Uint8Array(capacity);
    this.flags = new Uint8Array(capacity);
    this.ts = new Float64Array(capacity);
    this.session = new Float64Array(capacity);
    this.value = new Float64Array(capacity);
    this.code = new Uint16Array(capacity);
    this.index = new Int32Array(capacity);
    this.sessionIds = options.keepSessionIds === true ? [] : null;
    this.ids = options.ids ?? AS_DECODED;
  }

  /** Columns of `events`, numbered 0, 1, 2... */
  static fromEvents(events: readonly PlaybackEvent[], ids?: IdTable): EventColumns {
    const columns = new EventColumns({ capacity: events.length, ids });
    for (let i = 0; i < events.length; i++) columns.push(events[i] as PlaybackEvent, i);
    return columns;
  }

  private grow(): void {
    const capacity = this.type.length * 2;
    const wider = <T extends Uint8Array | Uint16Array | Int32Array | Float64Array>(from: T, make: (n: number) => T): T => {
      const to = make(capacity);
      to.set(from);
      return to;
    };
    this.type = wider(this.type, (n) => new Uint8Array(n));
    this.flags = wider(this.flags, (n) => new Uint8Array(n));
    this.ts = wider(this.ts, (n) => new Float64Array(n));
    this.session = wider(this.session, (n) => new Float64Array(n));
    this.value = wider(this.value, (n) => new Float64Array(n));
    this.code = wider(this.code, (n) => new Uint16Array(n));
    this.index = wider(this.index, (n) => new Int32Array(n));
  }

  /** The workspace of the row pushed last (already checked against the batch's allowed workspaces). */
  lastOwnerId(): string | undefined {
    return this.lastOwner;
  }

  private ownerOf(owner: string): string {
    if (owner === this.lastOwner) return this.lastOwner;
    const canonical = this.ids.ownerId(owner);
    if (!this.owners.includes(canonical)) this.owners.push(canonical);
    this.lastOwner = canonical;
    return canonical;
  }

  /** Appends an accepted event found at `index` of its batch. */
  push(e: PlaybackEvent, index: number): void {
    this.pushRow(TYPE[e.type], e.owner, this.assetId(e.owner, e.asset_id), sessionHash(e.session_id), e.ts, e.type === 'start' ? e.startup_ms : e.latency_ms, e.error_code ?? 0, e.workspace_only === true, index);
    if (this.sessionIds !== null) this.sessionIds.push(e.session_id);
    if (e.type === 'error' && (e.http_status !== undefined || e.url !== undefined || e.ip !== undefined || e.ua !== undefined || e.msg !== undefined)) {
      (this.details ??= new Map()).set(this.length - 1, { http_status: e.http_status, url: e.url, ip: e.ip, ua: e.ua, msg: e.msg });
    }
  }

  /** The long-lived copy of an asset id of `owner`, when the store holds one (see IdTable). */
  assetId(owner: string, assetId: string): string {
    return this.ids.assetId(owner, assetId);
  }

  /** Appends one row (the owner's long-lived copy is found here; `asset` should be one already: see assetId). */
  pushRow(type: number, owner: string, asset: string, session: number, ts: number, value: number | undefined, code: number, workspaceOnly: boolean, index: number): void {
    if (this.length === this.type.length) this.grow();
    const i = this.length++;
    this.type[i] = type;
    this.flags[i] = workspaceOnly ? WORKSPACE_ONLY : 0;
    this.ts[i] = ts;
    this.session[i] = session;
    this.value[i] = value ?? NaN;
    this.code[i] = code;
    this.index[i] = index;
    this.owner.push(this.ownerOf(owner));
    this.asset.push(asset);
  }

  workspaceOnly(i: number): boolean {
    return ((this.flags[i] as number) & WORKSPACE_ONLY) !== 0;
  }

  /** The optional number of event `i` (latency or startup), or undefined. */
  valueAt(i: number): number | undefined {
    const value = this.value[i] as number;
    return Number.isNaN(value) ? undefined : value;
  }

  /** Rows [from, to) whose workspace is not `owner` (a workspace erased while its events waited). */
  without(owner: string, from = 0, to = this.length): EventColumns {
    const kept = new EventColumns({ capacity: to - from, keepSessionIds: this.sessionIds !== null, ids: this.ids });
    for (let i = from; i < to; i++) {
      if (this.owner[i] === owner) continue;
      kept.pushRow(this.type[i] as number, this.owner[i] as string, this.asset[i] as string, this.session[i] as number, this.ts[i] as number, this.valueAt(i), this.code[i] as number, this.workspaceOnly(i), this.index[i] as number);
      const details = this.details?.get(i);
      if (details !== undefined) (kept.details ??= new Map()).set(kept.length - 1, details);
      if (this.sessionIds !== null) kept.sessionIds?.push(this.sessionIds[i] as string);
    }
    return kept;
  }

  /**
   * Event `i` as an object again (the cluster's Redis store counts objects); needs the session
   * ids (keepSessionIds).
   */
  event(i: number): PlaybackEvent {
    if (this.sessionIds === null) throw new Error('event columns: session ids were not kept');
    const type = TYPE_NAMES[this.type[i] as number] as PlaybackEventType;
    const value = this.valueAt(i);
    const error = type === 'error';
    const details = error ? this.details?.get(i) : undefined;
    return {
      type,
      owner: this.owner[i] as string,
      asset_id: this.asset[i] as string,
      session_id: this.sessionIds[i] as string,
      ts: this.ts[i] as number,
      latency_ms: type === 'manifest' || type === 'ad' ? value : undefined,
      error_code: error ? (this.code[i] as number) : undefined,
      http_status: details?.http_status,
      url: details?.url,
      ip: details?.ip,
      ua: details?.ua,
      msg: details?.msg,
      startup_ms: type === 'start' ? value : undefined,
      workspace_only: this.workspaceOnly(i) ? true : undefined,
    };
  }

  /** Every event as an object (see `event`). */
  toEvents(): PlaybackEvent[] {
    const events: PlaybackEvent[] = [];
    for (let i = 0; i < this.length; i++) events.push(this.event(i));
    return events;
  }
}
