import { randomBytes } from 'node:crypto';
import { Command, InvalidArgumentError } from 'commander';
import { signPlaybackUrl } from '../modules/playback-edge/playback-token.js';
import { resolveCredentials } from './profiles.js';

/** `90`, `90s`, `15m`, `2h`, `1d` as seconds. */
export function parseSeconds(value: string): number {
  const m = /^(\d+)(s|m|h|d)?$/.exec(value.trim());
  if (!m) throw new InvalidArgumentError('use seconds or a number with s, m, h or d (e.g. 3600, 90m, 2h)');
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
}

const collectParam = (value: string, previous: Array<[string, string]>): Array<[string, string]> => {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError('use name=value, e.g. --param hlsver=4');
  return [...previous, [value.slice(0, eq), value.slice(eq + 1)]];
};

/** `playline sign-playback <asset>`: a signed playback URL that any HLS player plays. */
export function signPlaybackCommand(): Command {
  return new Command('sign-playback')
    .description('Print a signed playback URL that any HLS player plays (hls.js, Safari, VLC, ffplay): /play/<asset>.m3u8?tc=1&exp=..&rn=..&ct=a&cid=..&oid=..[&params]&sig=..')
    .argument('<content_id>', 'the asset id, packaged in the workspace\'s library (or the slicer id with --event)')
    .option('--owner <workspace_id>', 'the workspace that owns the content (oid; default: the profile\'s, see playline login)')
    .option('--key <secret>', 'an API key of the owner, or the application key secret with --kid (prefer PLAYLINE_API_KEY or playline login)')
    .option('--profile <name>', 'the saved sign-in to use (default: PLAYLINE_PROFILE or "default")')
    .option('--kid <name>', 'sign with this application key (its secret in --key)')
    .option('--kv <version>', 'the application key version')
    .option('--event', 'a live event URL (/play/event/<slicer id>.m3u8, ct=e): plays the managed slicer\'s live window')
    .option('--expires-in <duration>', 'how long the URL stays valid (seconds, or 90m, 2h, 1d)', parseSeconds, 3600)
    .option('--param <name=value>', 'another signed parameter, repeatable (ad=preroll, pbs=..., hlsver=4, drm=...)', collectParam, [])
    .option('--base-url <url>', 'where the edge is (default: PLAYLINE_BASE_URL, the profile\'s, or http://127.0.0.1:8080)')
    .option('--json', 'print {url, expires_at} as JSON')
    .addHelpText('after', `
Example:
  PLAYLINE_API_KEY=<key> playline sign-playback <asset id> --owner <workspace id> --param ad=preroll --expires-in 2h
  ffplay "$(playline sign-playback <asset id>)"                 (with a saved sign-in, see playline login)`)
    .action((contentId: string, opts: { owner?: string; key?: string; profile?: string; kid?: string; kv?: string; event?: boolean; expiresIn: number; param: Array<[string, string]>; baseUrl?: string; json?: boolean }) => {
      if (opts.kid !== undefined && opts.key === undefined && !process.env.PLAYLINE_API_KEY) throw new Error('--kid signs with an application key: give its secret in --key (or PLAYLINE_API_KEY)');
      const { owner, key, baseUrl } = resolveCredentials(opts);
      const params: Array<[string, string]> = [...opts.param];
      if (opts.kid !== undefined) params.push(['kid', opts.kid]);
      if (opts.kv !== undefined) params.push(['kv', opts.kv]);
      const expiresAt = Math.floor(Date.now() / 1000) + opts.expiresIn;
      const url = signPlaybackUrl(
        { baseUrl, kind: opts.event ? 'event' : 'asset', contentId, owner, key, expiresAt, params },
        () => randomBytes(8).toString('hex'),
      );
      process.stdout.write(opts.json ? `${JSON.stringify({ url, expires_at: expiresAt }, null, 2)}\n` : `${url}\n`);
    });
}
