import { hostname } from 'node:os';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { FastifyRequest } from 'fastify';
import type { Config } from './config.js';
import { SECRET_FIELDS } from './secret-fields.js';

export type { Logger };

/**
 * Credential-bearing fields (the one list, secret-fields.ts), wherever a log call puts them: at
 * the top of the logged object or one level down (`{ target: { password } }`), and the
 * Authorization header of a request.
 */
export const REDACTED_PATHS = ['req.headers.authorization', 'headers.authorization', ...SECRET_FIELDS, ...SECRET_FIELDS.map((field) => `*.${field}`)];
export const REDACTED = '********';

/**
 * Where loggers write by default: stdout (the server, whose stdout is its log), or stderr for the
 * other CLI commands, whose stdout is their output (`--json` must stay pure JSON).
 */
let logFd: 1 | 2 = 1;

/** Sends every logger created from now on to stderr (the CLI does it for every command but serve). */
export const sendLogsToStderr = (): void => {
  logFd = 2;
};

export interface LoggerSettings {
  level: Config['logLevel'];
  /** Fields on every line (cluster mode: the instance id), besides pid and hostname. */
  bindings?: Record<string, string>;
  /** Where lines go; default stdout (stderr once sendLogsToStderr was called). Tests capture lines here. */
  destination?: DestinationStream;
}

const HLS_PUSH_TOKEN = /^(\/ingest\/hls\/[^/]*\/[^/]*\/)[^/]+/;
const SESSION_TOKEN = /^(\/play\/s\/)[^/]+/;

/**
 * A request's path as logged: no query string, and no credential a path carries: the token of
 * an `hls` slicer's ingest URL (`/ingest/hls/<workspace>/<slicer>/<token>/<file>`) and a playback
 * session's token (`/play/s/<token>/...`, which plays the content until it expires). Repeated
 * slashes are logged as one, as the router reads them (`//ingest//hls/...` reaches the same
 * route, so its token is hidden too). Runs for every access line: no split or regex unless
 * the path asks for one.
 */
export const loggedPath = (url: string): string => {
  const query = url.indexOf('?');
  let path = query === -1 ? url : url.slice(0, query);
  if (path.includes('//')) path = path.replace(/\/{2,}/g, '/');
  if (path.startsWith('/play/s/')) return path.replace(SESSION_TOKEN, `$1${REDACTED}`);
  return path.startsWith('/ingest/hls/') ? path.replace(HLS_PUSH_TOKEN, `$1${REDACTED}`) : path;
};

/**
 * Where a root logger writes, for lines built by hand (the access line): the destination and the
 * base fields as pino renders them (`,"pid":1,"hostname":"h"`).
 */
export interface LineSink {
  write(line: string): void;
  base: string;
}

const lineSinks = new WeakMap<Logger, BatchedLineSink>();

/**
 * Access lines gather up to this many bytes (about 130 lines) before they are handed to the log
 * destination, and wait at most LOG_FLUSH_MS. Each asynchronous write wakes a thread-pool thread
 * and SonicBoom measures what it holds on every write: one write per line cost a signed GET about
 * 7 µs of event loop in a profile (bench/profile-ingest.ts), 32 KiB at a time about 1 µs.
 */
const LOG_BUFFER_BYTES = 32768;
const LOG_FLUSH_MS = 1000;

/** The line sink of a logger made by createLogger (undefined for any other). */
export const lineSinkOf = (log: Logger): LineSink | undefined => lineSinks.get(log);

/**
 * The process's one root logger: the runtime builds it from the config and hands it to Fastify
 * (`loggerInstance`) and, as `log.child({ module })`, to every module, so every line gets the
 * same level, base fields and redaction. Request lines carry the path without its query string
 * (msg, sig and playback tokens stay out of logs).
 *
 * The server's log is asynchronous (written while the event loop serves the next requests);
 * access lines are gathered besides (BatchedLineSink). pino registers a synchronous flush of
 * this destination on process exit (a last line before process.exit is not lost), and the
 * runtime flushes both on close; a process killed outright (SIGKILL) loses at most the last
 * second of access lines. The CLI's stderr stays synchronous: its commands are short.
 */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level,
    base: { pid: process.pid, hostname: hostname(), ...settings.bindings },
    redact: { paths: REDACTED_PATHS, censor: REDACTED },
    serializers: {
      req: (req: FastifyRequest) => ({ method: req.method, url: loggedPath(req.url), remoteAddress: req.ip }),
      err: pino.stdSerializers.err,
    },
  };
  const destination = settings.destination ?? (logFd === 1 ? new ServerLogDestination() : pino.destination({ fd: 2, sync: true }));
  const log = pino(options, destination);
  const base = JSON.stringify(options.base).slice(1, -1);
  // A destination given by the caller (tests) gets one line per write, as pino's own lines.
  lineSinks.set(log, new BatchedLineSink(destination, base === '' ? '' : `,${base}`, settings.destination === undefined));
  return log;
}

/**
 * The server log's destination: pino's asynchronous SonicBoom on stdout, holding bytes. pino's
 * own lines (strings) are encoded as they come; access lines arrive already as bytes, a chunk
 * of many at a time (BatchedLineSink), and go to the file as they are, with no string joined,
 * measured or encoded again on the way.
 */
class ServerLogDestination implements DestinationStream {
  private readonly boom = pino.destination({ fd: 1, sync: false, contentMode: 'buffer' });

  write(line: string): void {
    this.writeBytes(Buffer.from(line, 'utf8'));
  }

  writeBytes(bytes: Buffer): void {
    // SonicBoom in buffer mode takes Buffers; its typings only name strings.
    (this.boom.write as unknown as (data: Buffer) => boolean).call(this.boom, bytes);
  }

  flush(done?: (err?: Error) => void): void {
    this.boom.flush(done);
  }

  flushSync(): void {
    this.boom.flushSync();
  }
}

/** Sinks holding lines, written out on process exit (one listener for them all). */
const holding = new Set<BatchedLineSink>();
let exitHooked = false;

/**
 * Hand-built lines (access lines) gathered as UTF-8 bytes and handed to the destination
 * LOG_BUFFER_BYTES at a time, or LOG_FLUSH_MS after the first one held, or when the runtime
 * closes or the process exits. pino's own lines (warnings, errors, module lines) are not held:
 * they go out at once. Access lines therefore may appear after a pino line written later, never
 * out of order among themselves.
 */
class BatchedLineSink implements LineSink {
  /** The chunk being filled: room for a full chunk and the longest line that can still join it. */
  private chunk = Buffer.allocUnsafe(2 * LOG_BUFFER_BYTES);
  private used = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly destination: DestinationStream & { writeBytes?: (bytes: Buffer) => void },
    readonly base: string,
    private readonly batched: boolean,
  ) {}

  write(line: string): void {
    // A line as long as a chunk (never an access line) goes out by itself.
    if (!this.batched || line.length * 3 > LOG_BUFFER_BYTES) {
      this.flush();
      this.destination.write(line);
      return;
    }
    // At most 3 bytes per UTF-16 unit: the line fits in the room left after LOG_BUFFER_BYTES.
    this.used += this.chunk.write(line, this.used, 'utf8');
    if (this.used >= LOG_BUFFER_BYTES) {
      this.flush();
      return;
    }
    if (this.timer !== undefined) return;
    if (!exitHooked) {
      exitHooked = true;
      process.once('exit', () => {
        for (const sink of holding) sink.flush(true);
      });
    }
    holding.add(this);
    this.timer = setTimeout(() => this.flush(), LOG_FLUSH_MS).unref();
  }

  /** Hands what is held to the destination now; `sync` (process exit): and writes it out. */
  flush(sync = false): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    holding.delete(this);
    if (this.used === 0) return;
    const bytes = this.chunk.subarray(0, this.used);
    // The destination may hold the bytes until its write completes: the next lines go to a new chunk.
    this.chunk = Buffer.allocUnsafe(2 * LOG_BUFFER_BYTES);
    this.used = 0;
    if (this.destination.writeBytes) this.destination.writeBytes(bytes);
    else this.destination.write(bytes.toString('utf8'));
    if (!sync) return;
    try {
      // pino's own flush on exit may have run before this listener.
      (this.destination as { flushSync?: () => void }).flushSync?.();
    } catch {
      // Nothing more can be done while the process exits.
    }
  }
}

/** Writes out what an asynchronous destination still holds (the runtime's last step on close). */
export const flushLogger = (log: Logger): Promise<void> =>
  new Promise((resolve) => {
    (lineSinks.get(log) as BatchedLineSink | undefined)?.flush();
    log.flush(() => resolve());
  });
