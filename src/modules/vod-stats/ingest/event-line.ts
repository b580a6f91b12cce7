/**
 * The ingest hot path's scanner (issue 18, point 4): one event of the common shape read straight
 * from the batch's bytes into columns: no UTF-8 decoding, no JSON.parse, no object and no string
 * per event. The ids it reads are ASCII (a byte at or above 0x80 in one sends the event down the
 * general path), so a byte is the UTF-16 unit JSON.parse would have made of it.
 *
 * It only ever accepts. Anything it does not recognise as plainly valid (an escape in a string,
 * a nested value, a repeated member, any value toEvent would refuse, an error event) makes it
 * answer false without having written anything, and the caller decodes that event with
 * JSON.parse and checks it with toEvent, which gives the exact rejection. So for every text the
 * outcome is the one JSON.parse + toEvent give; `event-line.test.ts` holds it to that.
 */
import { MAX_ID_LENGTH, MAX_LATENCY_MS } from '../events.schema.js';
import { TYPE, type EventColumns } from '../event-columns.js';
import { sessionHashOfAscii } from '../session-hash.js';
import { RETENTION_MS } from '../stats-window.js';
import type { EventBatchContext } from './event-fields.js';
import { BACKSLASH, CLOSE_OBJECT, COMMA, CR, LF, OPEN_OBJECT, QUOTE, SPACE, TAB } from './json-array.js';

const COLON = 0x3a;
const OPEN = OPEN_OBJECT;
const CLOSE = CLOSE_OBJECT;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/** The members toEvent reads, by number; others are skipped. */
const K = { type: 0, owner: 1, asset: 2, session: 3, ts: 4, latency: 5, startup: 6, scope: 7, code: 8 } as const;
type K = (typeof K)[keyof typeof K];
/** Whether the ASCII `word` stands in `bytes` at `at`. */
const wordAt = (bytes: Buffer, at: number, word: string): boolean => {
  if (at + word.length > bytes.length) return false;
  for (let i = 0; i < word.length; i++) if (bytes[at + i] !== word.charCodeAt(i)) return false;
  return true;
};

/** The known member whose name is `bytes` from `from` to `to`, or -1: compared in place, nothing decoded. */
const keyAt = (text: Buffer, from: number, to: number): number => {
  switch (to - from) {
    case 2:
      return wordAt(text, from, 'ts') ? K.ts : -1;
    case 4:
      return wordAt(text, from, 'type') ? K.type : -1;
    case 5:
      return wordAt(text, from, 'owner') ? K.owner : -1;
    case 8:
      return wordAt(text, from, 'asset_id') ? K.asset : -1;
    case 10:
      if (wordAt(text, from, 'session_id')) return K.session;
      if (wordAt(text, from, 'latency_ms')) return K.latency;
      if (wordAt(text, from, 'startup_ms')) return K.startup;
      return wordAt(text, from, 'error_code') ? K.code : -1;
    case 14:
      return wordAt(text, from, 'workspace_only') ? K.scope : -1;
    default:
      return -1;
  }
};

/** The type code of a type name other than `error` (from `from` to `to`), or -1. */
const typeAt = (text: Buffer, from: number, to: number): number => {
  switch (to - from) {
    case 2:
      return wordAt(text, from, 'ad') ? TYPE.ad : -1;
    case 5:
      return wordAt(text, from, 'start') ? TYPE.start : -1;
    case 7:
      return wordAt(text, from, 'request') ? TYPE.request : -1;
    case 8:
      if (wordAt(text, from, 'manifest')) return TYPE.manifest;
      return wordAt(text, from, 'rebuffer') ? TYPE.rebuffer : -1;
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
 * JSON.parse would refuse (a control character, a bad escape, no end) or, unless `escapes` (a
 * value that is only skipped), one with any escape or any byte that is not ASCII.
 */
const stringEnd = (text: Buffer, i: number, end: number, escapes: boolean): number => {
  for (let j = i + 1; j < end; j++) {
    const c = text[j] as number;
    if (c === QUOTE) return j;
    if (c < SPACE) return -1;
    // Not ASCII: fine in a value nobody reads (decoding can only make it characters), never in one read here.
    if (c >= 0x80 && !escapes) return -1;
    if (c === BACKSLASH) {
      if (!escapes) return -1;
      const e = text[++j] as number;
      if (e === 0x75) {
        if (j + 4 >= end || !isHex(text[j + 1] as number) || !isHex(text[j + 2] as number) || !isHex(text[j + 3] as number) || !isHex(text[j + 4] as number)) return -1;
        j += 4;
      } else if (!isEscape(e)) return -1;
    }
  }
  return -1;
};

/**
 * stringEnd of an asset id (ASCII, no escape), hashing its bytes on the way (FNV-1a) into
 * `scan.number[K.asset]`, for assetIdAt.
 */
const assetEnd = (text: Buffer, i: number, end: number): number => {
  let h = 0x811c9dc5;
  for (let j = i + 1; j < end; j++) {
    const c = text[j] as number;
    if (c === QUOTE) {
      scan.number[K.asset] = h >>> 0;
      return j;
    }
    if (c < SPACE || c >= 0x80 || c === BACKSLASH) return -1;
    h = Math.imul(h ^ c, 0x01000193);
  }
  return -1;
};

/** 10^0 to 10^16, each an exact double. */
const POWERS_OF_TEN = Array.from({ length: 17 }, (_, n) => 10 ** n);

/** The end of the JSON number at `i` (its exact grammar), or -1; its value is left in `scan.number[k]`. */
const numberEnd = (text: Buffer, i: number, end: number, k: number): number => {
  const first = i;
  if ((text[i] as number) === MINUS) i++;
  const digits = i;
  let c = (text[i] as number);
  if (c === ZERO) i++;
  else if (c > ZERO && c <= NINE) {
    while (i < end && (c = (text[i] as number)) >= ZERO && c <= NINE) i++;
  } else return -1;
  let integer = true;
  let fractionDigits = 0;
  if (i < end && (text[i] as number) === DOT) {
    integer = false;
    const fraction = ++i;
    while (i < end && (c = (text[i] as number)) >= ZERO && c <= NINE) i++;
    if (i === fraction) return -1;
    fractionDigits = i - fraction;
  }
  c = (text[i] as number);
  if (i < end && (c === 0x65 || c === 0x45)) {
    integer = false;
    fractionDigits = 0;
    i++;
    c = (text[i] as number);
    if (c === PLUS || c === MINUS) i++;
    const exponent = i;
    while (i < end && (c = (text[i] as number)) >= ZERO && c <= NINE) i++;
    if (i === exponent) return -1;
  }
  if (integer && i - digits <= 15) {
    let value = 0;
    for (let j = digits; j < i; j++) value = value * 10 + ((text[j] as number) - ZERO);
    scan.number[k] = first === digits ? value : -value;
  } else if (fractionDigits > 0 && i - digits <= 16) {
    // Digits and a point, no exponent: an integer below 10^15 over 10^f, both exact doubles, so
    // the one division rounds correctly, as JSON.parse does.
    let value = 0;
    for (let j = digits; j < i; j++) {
      const d = text[j] as number;
      if (d !== DOT) value = value * 10 + (d - ZERO);
    }
    value /= POWERS_OF_TEN[fractionDigits] as number;
    scan.number[k] = first === digits ? value : -value;
  } else {
    // The same correctly rounded double JSON.parse gives for the same valid number text.
    scan.number[k] = Number(latin1(text, first, i));
  }
  return i;
};

/** ASCII bytes as a string of their own. */
const latin1 = (bytes: Buffer, from: number, to: number): string => bytes.toString('latin1', from, to);

/** Reads the members into `scan`; false for anything but a flat object of plain values with no known member twice. */
const scanMembers = (text: Buffer, start: number, end: number): boolean => {
  const kinds = scan.kind;
  for (let k = 0; k < kinds.length; k++) kinds[k] = V.none;
  let i = start;
  while (i < end && isSpace((text[i] as number))) i++;
  if ((text[i] as number) !== OPEN) return false;
  i++;
  while (i < end && isSpace((text[i] as number))) i++;
  if ((text[i] as number) === CLOSE) return false;
  for (;;) {
    if ((text[i] as number) !== QUOTE) return false;
    const keyEnd = stringEnd(text, i, end, false);
    if (keyEnd < 0) return false;
    const slot = keyAt(text, i + 1, keyEnd);
    i = keyEnd + 1;
    while (i < end && isSpace((text[i] as number))) i++;
    if ((text[i] as number) !== COLON) return false;
    i++;
    while (i < end && isSpace((text[i] as number))) i++;
    if (slot >= 0 && scan.kind[slot] !== V.none) return false;
    const c = (text[i] as number);
    let kind: number;
    let valueEnd: number;
    if (c === QUOTE) {
      // Only an unknown member's value may hold escapes: it is skipped, never decoded.
      const close = slot === K.asset ? assetEnd(text, i, end) : stringEnd(text, i, end, slot < 0);
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
    while (i < end && isSpace((text[i] as number))) i++;
    const next = (text[i] as number);
    if (next === COMMA) {
      i++;
      while (i < end && isSpace((text[i] as number))) i++;
      continue;
    }
    if (next !== CLOSE) return false;
    i++;
    while (i < end && isSpace((text[i] as number))) i++;
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
/** The member's bytes as a string (ASCII: their own characters, no slice of anything). */
const textOf = (text: Buffer, k: K): string => latin1(text, scan.from[k] as number, scan.to[k] as number);

/** Whether the ASCII string `id` is `bytes` from `from` to `to`. */
const sameId = (id: string, bytes: Uint8Array, from: number, to: number): boolean => {
  if (id.length !== to - from) return false;
  for (let i = 0; i < id.length; i++) if (bytes[from + i] !== id.charCodeAt(i)) return false;
  return true;
};

/**
 * Asset ids seen lately, one per slot by a hash of their bytes (direct-mapped: a fixed 4,096
 * references, whatever the number of assets), so a repeated id is found without decoding it. A
 * miss decodes the id and asks the batch for the store's own copy (a short-lived string otherwise).
 */
const ASSET_SLOTS = 4096;
const recentAssets: (string | undefined)[] = new Array<string | undefined>(ASSET_SLOTS).fill(undefined);
const assetIdAt = (text: Buffer, from: number, to: number, owner: string, columns: EventColumns): string => {
  const slot = (scan.number[K.asset] as number) & (ASSET_SLOTS - 1);
  const known = recentAssets[slot];
  if (known !== undefined && sameId(known, text, from, to)) return known;
  const id = columns.assetId(owner, latin1(text, from, to));
  recentAssets[slot] = id;
  return id;
};

/**
 * Scans the event that is `text` from `start` to `end` (an NDJSON line without its newline)
 * into `columns` as event `index` of its batch, when it is of the common shape and valid; false
 * (nothing written) otherwise: the caller then decodes it the general way.
 */
export const scanEvent = (text: Buffer, start: number, end: number, ctx: EventBatchContext, columns: EventColumns, index: number): boolean => {
  if (!scanMembers(text, start, end)) return false;
  if (scan.kind[K.type] !== V.string) return false;
  // Error events carry texts for Error Reporting: the general path keeps those.
  const type = typeAt(text, scan.from[K.type] as number, scan.to[K.type] as number);
  if (type < 0) return false;
  if (!isId(K.owner) || !isId(K.asset) || !isId(K.session)) return false;

  const last = columns.lastOwnerId();
  let owner: string;
  if (last !== undefined && sameId(last, text, scan.from[K.owner] as number, scan.to[K.owner] as number)) owner = last;
  else {
    owner = textOf(text, K.owner);
    if (ctx.owners !== null && !ctx.owners.has(owner)) return false;
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

  const session = sessionHashOfAscii(text, scan.from[K.session] as number, scan.to[K.session] as number);
  const asset = assetIdAt(text, scan.from[K.asset] as number, scan.to[K.asset] as number, owner, columns);
  columns.pushRow(type, owner, asset, session, ts, value, 0, scope === V.true, index);
  return true;
};
