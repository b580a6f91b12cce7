import { pino, type Logger } from 'pino';
import type { FastifyServerOptions } from 'fastify';
import type { FastifyRequest } from 'fastify';

/**
 * Pino options: request lines carry the path without its query string (msg, sig and playback
 * tokens stay out of logs), and credential-bearing fields are redacted wherever they appear.
 */
export const loggerOptions = (level: string): FastifyServerOptions['logger'] =>
  level === 'silent'
    ? false
    : {
        level,
        redact: {
          paths: ['req.headers.authorization', 'headers.authorization', '*.secret', '*.password', '*.stream_id', '*.target_stream', '*.apiKey', '*.api_key'],
          censor: '********',
        },
        serializers: {
          req: (req: FastifyRequest) => ({
            method: req.method,
            url: req.url.split('?')[0],
            remoteAddress: req.ip,
          }),
        },
      };

/**
 * Where module loggers write: stdout (the server, whose stdout is its log), or stderr for the
 * other CLI commands, whose stdout is their output (`--json` must stay pure JSON).
 */
let logFd: 1 | 2 = 1;

/** Sends every module logger created from now on to stderr (the CLI does it for data commands). */
export const sendLogsToStderr = (): void => {
  logFd = 2;
};

/** A module's own logger (its name on every line), on the process's log stream. */
export const moduleLogger = (name: string, level: string): Logger => pino({ name, level }, pino.destination({ fd: logFd, sync: true }));
