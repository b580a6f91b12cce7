import { hostname } from 'node:os';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { FastifyRequest } from 'fastify';
import type { Config } from './config.js';

export type { Logger };

/**
 * Credential-bearing fields, wherever a log call puts them: at the top of the logged object or
 * one level down (`{ target: { password } }`), and the Authorization header of a request.
 */
const SECRET_FIELDS = ['secret', 'password', 'stream_id', 'target_stream', 'apiKey', 'api_key', 'authorization'];
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

/**
 * The process's one root logger: the runtime builds it from the config and hands it to Fastify
 * (`loggerInstance`) and, as `log.child({ module })`, to every module, so every line gets the
 * same level, base fields and redaction. Request lines carry the path without its query string
 * (msg, sig and playback tokens stay out of logs).
 */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level,
    base: { pid: process.pid, hostname: hostname(), ...settings.bindings },
    redact: { paths: REDACTED_PATHS, censor: REDACTED },
    serializers: {
      req: (req: FastifyRequest) => ({ method: req.method, url: req.url.split('?')[0], remoteAddress: req.ip }),
      err: pino.stdSerializers.err,
    },
  };
  if (settings.destination) return pino(options, settings.destination);
  // pino's own stdout destination is flushed on process exit: a last line before process.exit is not lost.
  return logFd === 1 ? pino(options) : pino(options, pino.destination({ fd: 2, sync: true }));
}
