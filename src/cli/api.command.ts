import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { signV4 } from '../platform/auth/v4-signature.js';
import { resolveBaseUrl, resolveCredentials, type ClientFlags } from './profiles.js';
import { fetchOrExplain } from './server-reach.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];

/** `--data` as text: JSON itself, `@file`, or `-` for stdin; checked to be JSON. */
const bodyOf = (data: string | undefined): string | undefined => {
  if (data === undefined) return undefined;
  const text = data === '-' ? readFileSync(0, 'utf8') : data.startsWith('@') ? readFileSync(data.slice(1), 'utf8') : data;
  try {
    JSON.parse(text);
  } catch {
    throw new Error('--data is not valid JSON');
  }
  return text;
};

/** The request URL: `path` (with its own query) on the base URL, signed with msg and sig unless it is an admin call. */
export const signedUrl = (baseUrl: string, path: string, sign: { owner: string; key: string; nowS: number } | null): string => {
  const withSlash = path.startsWith('/') ? path : `/${path}`;
  const url = new URL(`${baseUrl}${withSlash}`);
  if (sign !== null) {
    const { msg, sig } = signV4(sign.owner, sign.key, sign.nowS);
    url.searchParams.append('msg', msg);
    url.searchParams.append('sig', sig);
  }
  return url.toString();
};

interface ApiOptions extends ClientFlags {
  data?: string;
  adminToken?: string;
  include?: boolean;
}

/** `playline api METHOD PATH [--data JSON]`: a signed request, its answer printed (like `gh api`). */
export function apiCommand(): Command {
  return new Command('api')
    .description('Send a signed request to the API and print the answer (body on stdout; the status on stderr when it is not 2xx, exit code 1)')
    .argument('<method>', `HTTP method: ${METHODS.join(', ')}`)
    .argument('<path>', 'API path with its query, e.g. /api/v4/monitoring/vod-stats?top=10')
    .option('--data <json>', 'JSON body; @file reads it from a file, - from stdin')
    .option('--owner <workspace_id>', 'the workspace that signs (default: the profile\'s)')
    .option('--key <api_key>', 'the API key (prefer PLAYLINE_API_KEY or playline login: flags show up in shell history)')
    .option('--base-url <url>', 'where the server is (default: PLAYLINE_BASE_URL, the profile\'s, or http://127.0.0.1:8080)')
    .option('--profile <name>', 'the saved sign-in to use (default: PLAYLINE_PROFILE or "default")')
    .option('--admin-token <token>', 'for /api/v4/admin/... calls: sent as a bearer token instead of a signature (default PLAYLINE_ADMIN_TOKEN)')
    .option('-i, --include', 'print the status line and headers before the body')
    .addHelpText('after', `
Examples:
  playline api GET /api/v4/workspace
  playline api GET '/api/v4/monitoring/vod-stats?top=10'
  playline api POST /api/v4/syndication-target --data '{"platform":"Twitch","target_protocol":"rtmp","target_stream":"live_1"}'
  PLAYLINE_ADMIN_TOKEN=... playline api GET /api/v4/admin/workspaces`)
    .action(async (methodArg: string, path: string, opts: ApiOptions) => {
      const method = methodArg.toUpperCase();
      if (!METHODS.includes(method)) throw new Error(`${methodArg} is not an HTTP method (${METHODS.join(', ')})`);
      const body = bodyOf(opts.data);
      const admin = /^\/?api\/v4\/admin(\/|$|\?)/.test(path);
      const adminToken = opts.adminToken ?? process.env.PLAYLINE_ADMIN_TOKEN;
      let url: string;
      const headers: Record<string, string> = { 'user-agent': 'playline-cli' };
      if (admin) {
        if (!adminToken) throw new Error('an admin call needs the admin token: --admin-token or PLAYLINE_ADMIN_TOKEN');
        url = signedUrl(resolveBaseUrl(opts), path, null);
        headers.authorization = `Bearer ${adminToken}`;
      } else {
        const who = resolveCredentials(opts);
        url = signedUrl(who.baseUrl, path, { owner: who.owner, key: who.key, nowS: Math.floor(Date.now() / 1000) });
      }
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetchOrExplain(url, { method, headers, ...(body !== undefined ? { body } : {}) });
      const text = await response.text();
      const statusLine = `HTTP ${response.status} ${response.statusText}`;
      if (opts.include) {
        process.stdout.write(`${statusLine}\n`);
        for (const [name, value] of response.headers) process.stdout.write(`${name}: ${value}\n`);
        process.stdout.write('\n');
      }
      const json = /json/.test(response.headers.get('content-type') ?? '');
      if (text !== '') process.stdout.write(json ? `${JSON.stringify(JSON.parse(text), null, 2)}\n` : text.endsWith('\n') ? text : `${text}\n`);
      if (!response.ok) {
        process.stderr.write(`${statusLine}\n`);
        process.exitCode = 1;
      }
    });
}

