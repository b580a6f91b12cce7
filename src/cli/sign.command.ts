import { Command } from 'commander';
import { signV4 } from '../platform/auth/v4-signature.js';
import { resolveCredentials } from './profiles.js';

const shellQuote = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;

/** A ready-to-run curl command for a signed request. */
export function signedCurl(options: { baseUrl: string; path: string; owner: string; key: string; method: string; data?: string; nowMs: number }): string {
  const { msg, sig } = signV4(options.owner, options.key, Math.floor(options.nowMs / 1000));
  const [path, query = ''] = options.path.split('?');
  const params = new URLSearchParams(query);
  params.append('msg', msg);
  params.append('sig', sig);
  const url = `${options.baseUrl.replace(/\/+$/, '')}${path?.startsWith('/') ? path : `/${path}`}?${params.toString()}`;
  const parts = ['curl', '-sS'];
  if (options.method !== 'GET') parts.push('-X', options.method);
  if (options.data !== undefined) parts.push('-H', shellQuote('Content-Type: application/json'), '--data', shellQuote(options.data));
  parts.push(shellQuote(url));
  return parts.join(' ');
}

export function signCommand(): Command {
  return new Command('sign')
    .description('Print a signed curl command for an API path (valid for the server\'s timestamp tolerance, 5 minutes by default)')
    .argument('<path>', 'API path, e.g. /api/v4/monitoring/vod-stats?top=10')
    .option('--owner <workspace_id>', 'the workspace that signs (default: the profile\'s, see playline login)')
    .option('--key <api_key>', 'the API key (prefer the PLAYLINE_API_KEY variable or playline login: flags show up in shell history)')
    .option('--base-url <url>', 'where the server is (default: PLAYLINE_BASE_URL, the profile\'s, or http://127.0.0.1:8080)')
    .option('--profile <name>', 'the saved sign-in to use (default: PLAYLINE_PROFILE or "default")')
    .option('-X, --method <method>', 'HTTP method', 'GET')
    .option('--data <json>', 'JSON body to send')
    .option('--json', 'print {url, msg, sig, command} as JSON')
    .action((path: string, opts: Record<string, string | boolean | undefined>) => {
      const who = resolveCredentials({
        ...(typeof opts.owner === 'string' ? { owner: opts.owner } : {}),
        ...(typeof opts.key === 'string' ? { key: opts.key } : {}),
        ...(typeof opts.baseUrl === 'string' ? { baseUrl: opts.baseUrl } : {}),
        ...(typeof opts.profile === 'string' ? { profile: opts.profile } : {}),
      });
      if (opts.data !== undefined) {
        try {
          JSON.parse(String(opts.data));
        } catch {
          throw new Error('--data is not valid JSON');
        }
      }
      const command = signedCurl({
        baseUrl: who.baseUrl,
        path,
        owner: who.owner,
        key: who.key,
        method: String(opts.method).toUpperCase(),
        ...(opts.data !== undefined ? { data: String(opts.data) } : {}),
        nowMs: Date.now(),
      });
      if (opts.json === true) process.stdout.write(`${JSON.stringify({ command }, null, 2)}\n`);
      else process.stdout.write(`${command}\n`);
    });
}
