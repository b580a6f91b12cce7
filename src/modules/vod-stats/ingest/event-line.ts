/**
 * The ingest hot path's scanner (issue 18, point 4): one event of the common shape read straight
 * from the batch's text into columns, with no JSON.parse, no object and no string per event.
 *
 * It only ever accepts. Anything it does not recognise as plainly valid (an escape in a string,
 * a nested value, a repeated member, any value toEvent would refuse, an error event) makes it
 * answer false without having written anything, and the caller decodes that event with
 * JSON.parse and checks it with toEvent, which gives the exact rejection. So for every text the
 * outcome is the one JSON.parse + toEvent give; `event-line.test.ts` holds it to that.
 */
import { MAX_ID_LENGTH, MAX_LATENCY_MS } from '../events.schema.js';
import { TYPE, intern, type EventColumns } from '../event-columns.js';
import { sessionHashOf } from '../store/session-marks.js';
import { RETENTION_MS } from '../stats-window.js';
import type { EventBatchContext } from './event-fields.js';

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/** The members toEvent reads, by number; others are skipped. */
const K = { type: 0, owner: 1, asset: 2, session: 3, ts: 4, latency: 5, startup: 6, scope: 7, code: 8 } as const;
type K = (typeof K)[keyof typeof K];
/** The known member whose name is `text` from `from` to `to`, or -1: compared in place, nothing sliced. */
const keyAt = (text: string, from: number, to: number): number => {
  switch (to - from) {
    case 2:
      return text.startsWith('ts', from) ? K.ts : -1;
    case 4:
      return text.startsWith('type', from) ? K.type : -1;
    case 5:
      return text.startsWith('owner', from) ? K.owner : -1;
    case 8:
      return text.startsWith('asset_id', from) ? K.asset : -1;
    case 10:
      if (text.startsWith('session_id', from)) return K.session;
      if (text.startsWith('latency_ms', from)) return K.latency;
      if (text.startsWith('startup_ms', from)) return K.startup;
      return text.startsWith('error_code', from) ? K.code : -1;
    case 14:
      return text.startsWith('workspace_only', from) ? K.scope : -1;
    default:
      return -1;
  }
};

/** The type code of a type name other than `error` (from `from` to `to`), or -1. */
const typeAt = (text: string, from: number, to: number): number => {
  switch (to - from) {
    case 2:
      return text.startsWith('ad', from) ? TYPE.ad : -1;
    case 5:
      return text.startsWith('start', from) ? TYPE.start : -1;
    case 7:
      return text.startsWith('request', from) ? TYPE.request : -1;
    case 8:
      if (text.startsWith('manifest', from)) return TYPE.manifest;
      return text.startsWith('rebuffer', from) ? TYPE.rebuffer : -1;
    default:
      return -1;
  }
};

/** A value's kind as scanned. */
const V = { none: 0, string: 1, number: 2, true: 3, false: 4, null: 5 } as const;

/**
 * The scan of one line: positions of the known members' values. One instance reused for every
 * line (nothing escapes a call), so the scan allocates nothing.
 */
class LineScan {
  kind = new Uint8Array(9);
  from = new Int32Array(9);
  to = new Int32Array(9);
  number = new Float64Array(9);
}
const scan = new LineScan();

const isSpace = (c: number): boolean => c === SPACE || c === LF || c === CR || c === TAB;

const isHex = (c: number): boolean => (c >= ZERO && c <= NINE) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
/** What may follow a backslash: " \\ / b f n r t (u is checked apart). */
const isEscape = (c: number): boolean => c === QUOTE || c === BACKSLASH || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74;

/**
 * The position of the closing quote of the string whose opening quote is at `i`, or -1 for one
 * JSON.parse would refuse (a control character, a bad escape, no end) or, unless `escapes`, one
 * with any escape (its value would need decoding).
 */
const stringEnd = (text: string, i: number, end: number, escapes: boolean): number => {
  for (let j = i + 1; j < end; j++) {
    const c = text.charCodeAt(j);
    if (c === QUOTE) return j;
    if (c < SPACE) return -1;
    if (c === BACKSLASH) {
      if (!escapes) return -1;
      const e = text.charCodeAt(++j);
      if (e === 0x75) {
        if (j + 4 >= end || !isHex(text.charCodeAt(j + 1)) || !isHex(text.charCodeAt(j + 2)) || !isHex(text.charCodeAt(j + 3)) || !isHex(text.charCodeAt(j + 4))) return -1;
        j += 4;
      } else if (!isEscape(e)) return -1;
    }
  }
  return -1;
};

/** The end of the JSON number at `i` (its exact grammar), or -1; its value is left in `scan.number[k]`. */
const numberEnd = (text: string, i: number, end: number, k: number): number => {
  const first = i;
  if (text.charCodeAt(i) === MINUS) i++;
  const digits = i;
  let c = text.charCodeAt(i);
  if (c === ZERO) i++;
  else if (c > ZERO && c <= NINE) {
    while (i < end && (c = text.charCodeAt(i)) >= ZERO && c <= NINE) i++;
  } else return -1;
  let integer = true;
  if (i < end && text.charCodeAt(i) === DOT) {
    integer = false;
    const fraction = ++i;
    while (i < end && (c = text.charCodeAt(i)) >= ZERO && c <= NINE) i++;
    if (i === fraction) return -1;
  }
  c = text.charCodeAt(i);
  if (i < end && (c === 0x65 || c === 0x45)) {
    integer = false;
    i++;
    c = text.charCodeAt(i);
    if (c === PLUS || c === MINUS) i++;
    const exponent = i;
    while (i < end && (c = text.charCodeAt(i)) >= ZERO && c <= NINE) i++;
    if (i === exponent) return -1;
  }
  if (integer && i - digits <= 15) {
    let value = 0;
    for (let j = digits; j < i; j++) value = value * 10 + (text.charCodeAt(j) - ZERO);
    scan.number[k] = first === digits ? value : -value;
  } else {
    // The same correctly rounded double JSON.parse gives for the same valid number text.
    scan.number[k] = Number(text.slice(first, i));
  }
  return i;
};

/** Whether `word` stands at `i`. */
const wordAt = (text: string, i: number, word: string): boolean => text.startsWith(word, i);

/** Reads the members into `scan`; false for anything but a flat object of plain values with no known member twice. */
const scanMembers = (text: string, start: number, end: number): boolean => {
  scan.kind.fill(V.none);
  let i = start;
  while (i < end && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== OPEN) return false;
  i++;
  while (i < end && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) === CLOSE) return false;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return false;
    const keyEnd = stringEnd(text, i, end, false);
    if (keyEnd < 0) return false;
    const slot = keyAt(text, i + 1, keyEnd);
    i = keyEnd + 1;
    while (i < end && isSpace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== COLON) return false;
    i++;
    while (i < end && isSpace(text.charCodeAt(i))) i++;
    if (slot >= 0 && scan.kind[slot] !== V.none) return false;
    const c = text.charCodeAt(i);
    let kind: number;
    let valueEnd: number;
    if (c === QUOTE) {
      // Only an unknown member's value may hold escapes: it is skipped, never decoded.
      const close = stringEnd(text, i, end, slot < 0);
      if (close < 0) return false;
      if (slot >= 0) {
        scan.from[slot] = i + 1;
        scan.to[slot] = close;
      }
      kind = V.string;
      valueEnd = close + 1;
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      // An unknown member's number goes to the type's slot, which only a string ever uses.
      valueEnd = numberEnd(text, i, end, slot >= 0 ? slot : K.type);
      if (valueEnd < 0) return false;
      kind = V.number;
    } else if (wordAt(text, i, 'true')) {
      kind = V.true;
      valueEnd = i + 4;
    } else if (wordAt(text, i, 'false')) {
      kind = V.false;
      valueEnd = i + 5;
    } else if (wordAt(text, i, 'null')) {
      kind = V.null;
      valueEnd = i + 4;
    } else return false;
    if (slot >= 0) scan.kind[slot] = kind;
    i = valueEnd;
    while (i < end && isSpace(text.charCodeAt(i))) i++;
    const next = text.charCodeAt(i);
    if (next === COMMA) {
      i++;
      while (i < end && isSpace(text.charCodeAt(i))) i++;
      continue;
    }
    if (next !== CLOSE) return false;
    i++;
    while (i < end && isSpace(text.charCodeAt(i))) i++;
    return i === end;
  }
};

/** A known id member: a string of 1 to MAX_ID_LENGTH units. */
const isId = (k: K): boolean => {
  if (scan.kind[k] !== V.string) return false;
  const length = (scan.to[k] as number) - (scan.from[k] as number);
  return length > 0 && length <= MAX_ID_LENGTH;
};
/** Absent or null. */
const isAbsent = (k: K): boolean => scan.kind[k] === V.none || scan.kind[k] === V.null;
/** The member's text, sliced out (a workspace id not seen just before). */
const textOf = (text: string, k: K): string => text.slice(scan.from[k], scan.to[k]);

/**
 * Canonical asset ids by a hash of their characters, so a known id is found without slicing it
 * out of the text. A miss (or two ids on one hash) slices, copies and interns.
 */
const assetsByHash = new Map<number, string>();
const ASSETS_HELD = 1 << 17;
const assetIdAt = (text: string, from: number, to: number): string => {
  let h = 0x811c9dc5 ^ (to - from);
  for (let i = from; i < to; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h &= 0x3fffffff;
  const known = assetsByHash.get(h);
  if (known !== undefined && known.length === to - from && text.startsWith(known, from)) return known;
  // A fresh copy, never a slice that would hold the whole batch text alive for as long as the id is kept.
  const id = intern(copyOf(text.slice(from, to)));
  if (assetsByHash.size >= ASSETS_HELD) assetsByHash.clear();
  assetsByHash.set(h, id);
  return id;
};

/** A string with its own characters (a plain id: no quote, backslash or control character). */
const copyOf = (slice: string): string => JSON.parse(`"${slice}"`) as string;

/**
 * Scans the event that is `text` from `start` to `end` (an NDJSON line, or a JSON array
 * element) into `columns` as event `index` of its batch, when it is of the common shape and
 * valid; false (nothing written) otherwise: the caller then decodes it the general way.
 */
export const scanEvent = (text: string, start: number, end: number, ctx: EventBatchContext, columns: EventColumns, index: number): boolean => {
  if (!scanMembers(text, start, end)) return false;
  if (scan.kind[K.type] !== V.string) return false;
  // Error events carry texts for Error Reporting: the general path keeps those.
  const type = typeAt(text, scan.from[K.type] as number, scan.to[K.type] as number);
  if (type < 0) return false;
  if (!isId(K.owner) || !isId(K.asset) || !isId(K.session)) return false;

  const ownerFrom = scan.from[K.owner] as number;
  const ownerTo = scan.to[K.owner] as number;
  const last = columns.lastOwnerId();
  let owner: string;
  if (last !== undefined && last.length === ownerTo - ownerFrom && text.startsWith(last, ownerFrom)) owner = last;
  else {
    owner = textOf(text, K.owner);
    if (ctx.owners !== null && !ctx.owners.has(owner)) return false;
    owner = intern(copyOf(owner));
  }

  let ts = ctx.now;
  if (!isAbsent(K.ts)) {
    if (scan.kind[K.ts] !== V.number) return false;
    const raw = scan.number[K.ts] as number;
    if (!Number.isSafeInteger(raw) || raw < 0 || raw < ctx.now - RETENTION_MS) return false;
    if (raw < ctx.now) ts = raw;
  }
  let value: number | undefined;
  if (!isAbsent(K.latency)) {
    if (type !== TYPE.manifest && type !== TYPE.ad) return false;
    if (scan.kind[K.latency] !== V.number) return false;
    value = scan.number[K.latency] as number;
    if (!(value >= 0 && value <= MAX_LATENCY_MS)) return false;
  }
  if (!isAbsent(K.startup)) {
    if (type !== TYPE.start) return false;
    if (scan.kind[K.startup] !== V.number) return false;
    value = scan.number[K.startup] as number;
    if (!(value >= 0 && value <= MAX_LATENCY_MS)) return false;
  }
  const scope = scan.kind[K.scope];
  if (scope !== V.none && scope !== V.null && scope !== V.true && scope !== V.false) return false;
  if (!isAbsent(K.code)) return false;

  const session = sessionHashOf(text, scan.from[K.session] as number, scan.to[K.session] as number);
  columns.pushRow(type, owner, assetIdAt(text, scan.from[K.asset] as number, scan.to[K.asset] as number), session, ts, value, 0, scope === V.true, index);
  return true;
};
