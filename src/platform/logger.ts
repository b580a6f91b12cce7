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
