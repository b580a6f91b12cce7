import { isIP } from 'node:net';
import { checkStreamOptions } from './stream-options.js';

/**
 * The shapes `target_stream` can take, and the checks of hosts and ports shared with
 * platform_config. Every check returns a message that never quotes the checked value: the
 * value may be a stream key or carry one.
 */
export type StreamForm =
  | 'stream-key'
  | 'rtmp-url'
  | 'rtmps-url'
  | 'http-dir-url'
  | 'srt-url'
  | 'rist-url'
  | 'none';

/** What a form looks like, for messages and documentation. */
export const streamFormShape: Record<StreamForm, string> = {
  'stream-key': 'a stream key',
  'rtmp-url': 'rtmp://host[:port]/<path>[/<key>]',
  'rtmps-url': 'rtmps://host[:port]/<path>[/<key>]',
  'http-dir-url': 'an http(s) URL ending in /',
  'srt-url': 'srt://host:port',
  'rist-url': 'rist://host:port with an even port',
  none: 'nothing',
};

const LABEL = /^[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/;

export function isValidHost(host: string): boolean {
  if (host.startsWith('[') && host.endsWith(']')) return isIP(host.slice(1, -1)) === 6;
  if (isIP(host) !== 0) return true;
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name.length === 0 || name.length > 253) return false;
  return name.split('.').every((label) => LABEL.test(label));
}

export const isValidPort = (port: unknown): port is number =>
  typeof port === 'number' && Number.isInteger(port) && port >= 1 && port <= 65535;

export const PORT_MESSAGE = 'must be an integer from 1 to 65535';

/** Parts of `scheme://[userinfo@]host[:port][path][?query]`; fragments and whitespace are not allowed. */
interface StreamUrl {
  scheme: string;
  host: string;
  port: number | undefined;
  portText: string | undefined;
  path: string;
  query: string;
}

const URL_PATTERN =
  /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(?:[^@/?#\s]*@)?(\[[0-9A-Fa-f:.]+\]|[^:/?#\s@[\]]*)(?::([^/?#\s]*))?([^?#\s]*)(\?[^#\s]*)?$/;

export function parseStreamUrl(value: string): StreamUrl | undefined {
  const match = URL_PATTERN.exec(value);
  if (!match) return undefined;
  const portText = match[3];
  return {
    scheme: (match[1] ?? '').toLowerCase(),
    host: match[2] ?? '',
    port: portText !== undefined && /^\d{1,5}$/.test(portText) ? Number(portText) : undefined,
    portText,
    path: match[4] ?? '',
    query: match[5] ?? '',
  };
}

/**
 * Checks `value` against `form`; returns the problems found (empty when it fits).
 * The caller has already established that `value` is a string and that the form is not `none`.
 */
export function checkStreamForm(form: Exclude<StreamForm, 'none'>, value: string): string[] {
  if (form === 'stream-key') {
    if (value.trim().length === 0) return ['must be a non-empty stream key'];
    return /\s/.test(value) ? ['must be a stream key without whitespace'] : [];
  }
  const shape = streamFormShape[form];
  const url = parseStreamUrl(value);
  if (!url) return [`must be a URL of the form ${shape}`];
  const problems: string[] = [];
  const schemes = schemesOf(form);
  if (!schemes.includes(url.scheme)) problems.push(`must start with ${schemes.map((s) => `${s}://`).join(' or ')}`);
  if (!isValidHost(url.host)) problems.push('must name a valid host');
  const portRequired = form === 'srt-url' || form === 'rist-url';
  if (url.portText === undefined || url.portText === '') {
    if (portRequired) problems.push('must give a port (host:port)');
  } else if (!isValidPort(url.port)) {
    problems.push(`port ${PORT_MESSAGE}`);
  } else if (form === 'rist-url' && url.port % 2 !== 0) {
    problems.push('port must be even (the next odd port carries error correction)');
  }
  problems.push(...checkPath(form, url));
  return problems;
}

function schemesOf(form: Exclude<StreamForm, 'none' | 'stream-key'>): string[] {
  switch (form) {
    case 'rtmp-url':
      return ['rtmp'];
    case 'rtmps-url':
      return ['rtmps'];
    case 'http-dir-url':
      return ['http', 'https'];
    case 'srt-url':
      return ['srt'];
    case 'rist-url':
      return ['rist'];
  }
}

function checkPath(form: StreamForm, { path, query }: StreamUrl): string[] {
  switch (form) {
    case 'rtmp-url':
    case 'rtmps-url': {
      // At least one path segment (the application); whether a stream key follows inside the
      // URL depends on the destination (spec: "<base_stream_url>/<stream_key>"), so
      // rtmp://a.rtmp.youtube.com/live2 is as valid as rtmp://host/live/<key>. A trailing
      // slash is tolerated; empty segments in between are not.
      const segments = path.split('/').slice(1);
      if (segments.at(-1) === '' && segments.length > 1) segments.pop();
      const fits = segments.length >= 1 && segments.every((s) => s.length > 0);
      return fits ? [] : ['must have a path after the host: /<path>[/<key>]'];
    }
    case 'http-dir-url':
      return query === '' && path.endsWith('/') ? [] : ['must end with / (the base URL the segments are pushed under)'];
    case 'srt-url':
    case 'rist-url':
      return [...(path === '' || path === '/' ? [] : ['must not have a path (host:port only)']), ...checkStreamOptions(form === 'srt-url' ? 'srt' : 'rist', query)];
    case 'none':
    case 'stream-key':
      return [];
  }
}
