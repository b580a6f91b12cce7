import { setImmediate as nextTurn } from 'node:timers/promises';
import { AppError } from '../../../platform/errors.js';
import { MAX_EVENT_LINE_BYTES, MAX_LISTED_REJECTIONS } from '../events.schema.js';
import type { EventRejection, PlaybackEvent } from '../events.schema.js';
import { EventColumns, type IdTable } from '../event-columns.js';
import { scanEvent } from './event-line.js';
import { MIN_EVENT_CHARS, Rejection, toEvent, type EventBatchContext } from './event-fields.js';
import { CR, LF, beginsOtherValue, isCloseArray, isComma, isOpenArray, skipSpace, valueEnd } from './json-array.js';

export type { EventBatchContext } from './event-fields.js';
export type EventBatchKind = 'ndjson' | 'json';

/** A listed rejection; `owner` names the workspace of a foreign-owner one (never sent to the client). */
export type ListedRejection = EventRejection & { owner?: string };

/** What a parse collects besides the events themselves. */
interface Rejections {
  /** The first MAX_LISTED_REJECTIONS rejections, by index. */
  rejected: ListedRejection[];
  /** Every rejection, listed or not. */
  rejectedCount: number;
}

export interface ParsedEventBatch extends Rejections {
  events: PlaybackEvent[];
  /** Where each event was in the batch (NDJSON line number, JSON array position), in order. */
  indexes: number[];
}

/** A batch parsed into columns (the embedded ingest's form: see EventColumns). */
export interface ParsedEventColumns extends Rejections {
  columns: EventColumns;
}

/** Where a parse puts what it accepts and rejects. */
interface Collector extends Rejections {
  keep(event: PlaybackEvent, index: number): void;
}

/**
 * A UTF-16 line of at most this many code units cannot exceed the byte limit in UTF-8
 * (3 bytes per unit at most), so only longer lines pay for an exact byte count.
 */
const SAFE_LINE_CHARS = Math.floor(MAX_EVENT_LINE_BYTES / 3);
/** A parse yields to the event loop after this many events or lines, or this many characters. */
const SLICE_ITEMS = 2048;
const SLICE_CHARS = 512 * 1024;
const LINE_TOO_LONG = new Rejection('line_too_long', `a line may hold at most ${MAX_EVENT_LINE_BYTES} bytes`);
const ELEMENT_TOO_LONG = new Rejection('line_too_long', `an event may hold at most ${MAX_EVENT_LINE_BYTES} bytes`);
const MALFORMED_LINE = new Rejection('malformed_json', 'the line is not valid JSON');

const reject = (out: Rejections, index: number, rejection: Rejection): void => {
  // Only the first few are kept: a batch of junk costs a counter, not an object per line.
  if (out.rejected.length < MAX_LISTED_REJECTIONS) {
    const listed: ListedRejection = { index, code: rejection.code, detail: rejection.detail };
    if (rejection.owner !== undefined) listed.owner = rejection.owner;
    out.rejected.push(listed);
  }
  out.rejectedCount++;
};

const take = (out: Collector, index: number, value: unknown, ctx: EventBatchContext): void => {
  const event = toEvent(value, ctx);
  if (event instanceof Rejection) reject(out, index, event);
  else out.keep(event, index);
};

const decode = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return MALFORMED;
  }
};
const MALFORMED = Symbol('malformed');

/**
 * One NDJSON line. A line too short to hold an event is blank (skipped) or rejected, and is
 * decoded only while rejections are still listed (to say why): junk costs no JSON.parse.
 */
const takeLine = (out: Collector, index: number, line: string, ctx: EventBatchContext): void => {
  if (line.length < MIN_EVENT_CHARS) {
    if (line.trim() === '') return;
    if (out.rejected.length >= MAX_LISTED_REJECTIONS) {
      out.rejectedCount++;
      return;
    }
  }
  const value = decode(line);
  if (value !== MALFORMED) take(out, index, value, ctx);
  else if (line.trim() !== '') reject(out, index, MALFORMED_LINE);
};

/** NDJSON: index = 0-based line number; blank lines are skipped but keep their number. Yields between slices. */
function* ndjsonSteps(text: string, ctx: EventBatchContext, out: Collector): Generator<void> {
  const length = text.length;
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let items = 0;
  let sliceStart = start;
  for (let index = 0; start < length; index++) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = length;
    const chars = end - start;
    if (chars > SAFE_LINE_CHARS && Buffer.byteLength(text.slice(start, end)) > MAX_EVENT_LINE_BYTES) {
      reject(out, index, LINE_TOO_LONG);
    } else if (chars > 0 && !(chars === 1 && text.charCodeAt(start) === 13)) {
      takeLine(out, index, text.slice(start, end), ctx);
    }
    start = end + 1;
    if (++items >= SLICE_ITEMS || start - sliceStart >= SLICE_CHARS) {
      if (start < length) yield;
      items = 0;
      sliceStart = start;
    }
  }
}

/**
 * NDJSON into columns, from the bytes: the same lines, indexes and outcomes as ndjsonSteps of the
 * decoded text (a newline byte never belongs to a multi-byte character, so each line decodes
 * alone to what it is in the whole). A line of the common shape is scanned without decoding
 * (scanEvent); any other is decoded and taken as ndjsonSteps takes it.
 */
function* ndjsonByteSteps(bytes: Buffer, ctx: EventBatchContext, out: ColumnList): Generator<void> {
  const length = bytes.length;
  // A byte-order mark (EF BB BF) decodes to U+FEFF, which ndjsonSteps skips.
  let start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  let items = 0;
  let sliceStart = start;
  for (let index = 0; start < length; index++) {
    let end = bytes.indexOf(LF, start);
    if (end === -1) end = length;
    const size = end - start;
    if (size > SAFE_LINE_CHARS) {
      // Long enough that its decoded length matters: decided on the decoded line, as ndjsonSteps does.
      const line = bytes.toString('utf8', start, end);
      if (line.length > SAFE_LINE_CHARS && Buffer.byteLength(line) > MAX_EVENT_LINE_BYTES) reject(out, index, LINE_TOO_LONG);
      else takeLine(out, index, line, ctx);
    } else if (size > 0 && !(size === 1 && bytes[start] === CR) && !scanEvent(bytes, start, end, ctx, out.columns, index)) {
      takeLine(out, index, bytes.toString('utf8', start, end), ctx);
    }
    start = end + 1;
    if (++items >= SLICE_ITEMS || start - sliceStart >= SLICE_CHARS) {
      if (start < length) yield;
      items = 0;
      sliceStart = start;
    }
  }
}

const malformed = () => new AppError('malformed_json', 'The body is not valid JSON');

/**
 * JSON: the body must be an array (else the whole batch is a 400), index = array position.
 * Elements are decoded one at a time; one longer than a line may be is rejected undecoded.
 */
function* jsonSteps(text: string, ctx: EventBatchContext, out: Collector): Generator<void> {
  let i = skipSpace(text, 0);
  if (!isOpenArray(text, i)) {
    if (!beginsOtherValue(text, i)) throw malformed();
    throw new AppError('validation_failed', 'The body must be a JSON array of events', { errors: [{ path: '', message: 'must be an array' }] });
  }
  i = skipSpace(text, i + 1);
  let items = 0;
  let sliceStart = i;
  if (isCloseArray(text, i)) i = skipSpace(text, i + 1);
  else {
    for (let index = 0; ; index++) {
      const end = valueEnd(text, i);
      if (end < 0) throw malformed();
      if (end - i > SAFE_LINE_CHARS && Buffer.byteLength(text.slice(i, end)) > MAX_EVENT_LINE_BYTES) reject(out, index, ELEMENT_TOO_LONG);
      else {
        const value = decode(text.slice(i, end));
        if (value === MALFORMED) throw malformed();
        take(out, index, value, ctx);
      }
      i = skipSpace(text, end);
      if (isCloseArray(text, i)) {
        i = skipSpace(text, i + 1);
        break;
      }
      if (!isComma(text, i)) throw malformed();
      i = skipSpace(text, i + 1);
      if (++items >= SLICE_ITEMS || i - sliceStart >= SLICE_CHARS) {
        yield;
        items = 0;
        sliceStart = i;
      }
    }
  }
  if (i !== text.length) throw malformed();
}

const stepsOf = (body: Buffer | string, kind: EventBatchKind, ctx: EventBatchContext, out: Collector): Generator<void> => {
  if (kind === 'ndjson' && out instanceof ColumnList && out.scans) return ndjsonByteSteps(typeof body === 'string' ? Buffer.from(body) : body, ctx, out);
  const text = typeof body === 'string' ? body : body.toString('utf8');
  return kind === 'ndjson' ? ndjsonSteps(text, ctx, out) : jsonSteps(text, ctx, out);
};

/**
 * Runs one slice. Junk makes JSON.parse throw, and most of a throw's cost is capturing a stack
 * nobody reads: none is captured while a slice runs (nothing else runs meanwhile).
 */
const runSlice = (steps: Generator<void>): boolean => {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return steps.next().done !== true;
  } finally {
    Error.stackTraceLimit = limit;
  }
};

/** Collects events as objects. */
class EventList implements Collector, ParsedEventBatch {
  events: PlaybackEvent[] = [];
  indexes: number[] = [];
  rejected: ListedRejection[] = [];
  rejectedCount = 0;

  keep(event: PlaybackEvent, index: number): void {
    this.events.push(event);
    this.indexes.push(index);
  }
}

/** Collects events into columns: each decoded event is dropped as soon as it is copied. */
class ColumnList implements Collector, ParsedEventColumns {
  rejected: ListedRejection[] = [];
  rejectedCount = 0;
  readonly columns: EventColumns;

  constructor(options: ColumnOptions) {
    this.columns = new EventColumns(options);
  }

  keep(event: PlaybackEvent, index: number): void {
    this.columns.push(event, index);
  }

  /** Whether events can be scanned from the bytes (no session id kept: a store that counts by id decodes every event). */
  get scans(): boolean {
    return this.columns.sessionIds === null;
  }
}

const plain = ({ events, indexes, rejected, rejectedCount }: EventList): ParsedEventBatch => ({ events, indexes, rejected, rejectedCount });

const parse = async <T extends Collector>(body: Buffer | string, kind: EventBatchKind, ctx: EventBatchContext, out: T): Promise<T> => {
  const steps = stepsOf(body, kind, ctx, out);
  while (runSlice(steps)) await nextTurn();
  return out;
};

const parseSync = <T extends Collector>(body: Buffer | string, kind: EventBatchKind, ctx: EventBatchContext, out: T): T => {
  const steps = stepsOf(body, kind, ctx, out);
  while (runSlice(steps));
  return out;
};

/**
 * Decodes and validates a batch of playback events with partial acceptance: good events are
 * returned even when others are bad; each bad one is counted, and the first
 * MAX_LISTED_REJECTIONS are listed by index with a reason. Parses in slices and yields to the
 * event loop between them, so a 16 MiB batch never holds other requests up for long. Throws an
 * AppError (400) only for a JSON body that is not a valid JSON array.
 */
export const parseEventBatch = async (body: Buffer | string, kind: EventBatchKind, ctx: EventBatchContext): Promise<ParsedEventBatch> =>
  plain(await parse(body, kind, ctx, new EventList()));

/** The same parse in one go, for replaying the journal (start-up, rebuild), where nothing waits. */
export const parseEventBatchSync = (body: Buffer | string, kind: EventBatchKind, ctx: EventBatchContext): ParsedEventBatch =>
  plain(parseSync(body, kind, ctx, new EventList()));

/**
 * How a batch is held in columns. `keepSessionIds`: keep the session ids too (for a store that
 * counts by id); `ids`: where the long-lived copies of ids are (the store that will count it).
 */
export interface ColumnOptions {
  keepSessionIds?: boolean;
  ids?: IdTable;
}

/** The same parse and checks, the accepted events held in columns (the embedded pipeline). */
export const parseEventColumns = (body: Buffer | string, kind: EventBatchKind, ctx: EventBatchContext, options: ColumnOptions = {}): Promise<ParsedEventColumns> =>
  parse(body, kind, ctx, new ColumnList(options));

/** parseEventColumns in one go (replay). */
export const parseEventColumnsSync = (body: Buffer | string, kind: EventBatchKind, ctx: EventBatchContext, options: ColumnOptions = {}): ParsedEventColumns =>
  parseSync(body, kind, ctx, new ColumnList(options));
