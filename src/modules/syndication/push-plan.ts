import { AppError } from '../../platform/errors.js';
import { platformTable } from './platform-table.js';
import { parseStreamUrl } from './stream-forms.js';
import { streamOptionsOf } from './stream-options.js';
import type { PlatformName, TargetCreateBody } from './syndication.schema.js';

/**
 * How a target is published to, worked out from the target with its secrets in clear. The plan
 * holds secrets; only the publisher's memory ever sees it (never a log line or a response).
 */
export type PushPlan =
  /** FLV over RTMP(S) through the loopback relay (the key never reaches ffmpeg). */
  | { kind: 'rtmp'; tls: boolean; host: string; port: number; app: string; streamName: string }
  /** MPEG-TS over SRT or RIST; `options` (only the allowed protocol options: stream-options.ts) go to ffmpeg through a pipe. */
  | { kind: 'mpegts'; scheme: 'srt' | 'rist'; host: string; port: number; options: Record<string, string> }
  /** HLS segments and playlist PUT under `baseUrl` (ends in `/`) through the loopback HTTP relay. */
  | { kind: 'hls-push'; baseUrl: string; host: string; port: number }
  /** Nothing is pushed: the service serves the live window at the generated pull URL. */
  | { kind: 'hls-pull' };

/** Ingest server per social platform (`PLAYLINE_PLATFORM_INGEST`), e.g. `{"Twitch":"rtmp://127.0.0.1:1935/app/"}`. */
export type PlatformIngest = Partial<Record<PlatformName, string>>;

const unavailable = (detail: string) => new AppError('publishing_unavailable', detail);

export function planPush(target: TargetCreateBody, ingest: PlatformIngest): PushPlan {
  const { platform, target_protocol: protocol } = target;
  if (protocol === 'zixi') throw unavailable(`${platform} over zixi cannot be published: zixi is a proprietary protocol ffmpeg does not speak`);
  if (platform !== 'Custom') {
    if (target.platform_config?.integrated === true) {
      throw unavailable(`integrated ${platform} publishing needs the platform's OAuth API, which this service does not implement; use a stream key target instead`);
    }
    const server = ingest[platform] ?? platformTable[platform].ingest;
    if (server === undefined) throw unavailable(`${platform} gives every stream its own ingest server: set it in PLAYLINE_PLATFORM_INGEST`);
    return rtmpPlan(`${server.replace(/\/+$/, '')}/${target.target_stream ?? ''}`, true);
  }
  const stream = target.target_stream ?? '';
  switch (protocol) {
    case 'rtmp':
    case 'rtmps':
      return rtmpPlan(stream, false);
    case 'srt':
    case 'rist': {
      const url = parseStreamUrl(stream);
      if (!url?.port) throw unavailable(`the ${protocol} target address cannot be read`);
      let options: Record<string, string>;
      try {
        options = streamOptionsOf(protocol, url.query);
      } catch (error) {
        // A target saved before the allow-list: refused here, never handed to ffmpeg.
        throw unavailable(`the ${protocol} target address: ${(error as Error).message}`);
      }
      return { kind: 'mpegts', scheme: protocol, host: unbracket(url.host), port: url.port, options };
    }
    case 'hls-push': {
      const url = parseStreamUrl(stream);
      if (!url || (url.scheme !== 'http' && url.scheme !== 'https')) throw unavailable('the HLS push destination cannot be read (http(s)://host[:port]/<path>/)');
      return { kind: 'hls-push', baseUrl: stream, host: unbracket(url.host), port: url.port ?? (url.scheme === 'https' ? 443 : 80) };
    }
    case 'hls':
      return { kind: 'hls-pull' };
  }
}

/**
 * rtmp[s]://host[:port]/<app>[/<key>], split as ffmpeg splits it: the last path segment is the
 * stream name and what comes before it the application, unless there is a single segment
 * (then it is the application, and `keyRequired` says whether that is an error).
 */
function rtmpPlan(value: string, keyRequired: boolean): PushPlan {
  const url = parseStreamUrl(value);
  if (!url || (url.scheme !== 'rtmp' && url.scheme !== 'rtmps')) throw unavailable('the RTMP destination cannot be read (rtmp[s]://host[:port]/<app>/<key>)');
  const segments = url.path.split('/').filter((s) => s !== '');
  if (segments.length === 0 || (keyRequired && segments.length < 2)) throw unavailable('the RTMP destination has no application or no stream key');
  const streamName = segments.length >= 2 ? `${segments.pop() ?? ''}${url.query}` : '';
  const tls = url.scheme === 'rtmps';
  return { kind: 'rtmp', tls, host: unbracket(url.host), port: url.port ?? (tls ? 443 : 1935), app: segments.join('/'), streamName };
}

const unbracket = (host: string): string => (host.startsWith('[') ? host.slice(1, -1) : host);

/** The secret values of a plan, for scrubbing failure messages that might echo one. */
export function secretsOfPlan(plan: PushPlan, target: TargetCreateBody): string[] {
  const values = [target.target_stream, target.platform_config?.password, target.platform_config?.stream_id];
  if (plan.kind === 'rtmp') values.push(plan.streamName);
  if (plan.kind === 'mpegts') values.push(...Object.values(plan.options));
  if (plan.kind === 'hls-push') values.push(plan.baseUrl);
  return values.filter((v): v is string => typeof v === 'string' && v.length >= 3);
}

export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('********');
  return out;
}
