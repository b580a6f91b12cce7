import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { DEFAULT_PROFILE, configPath, removeProfile, resolveBaseUrl, saveProfile } from './profiles.js';
import { signedUrl } from './api.command.js';
import { fetchOrExplain } from './server-reach.js';

/** Reads the key from the terminal without echoing it, or the first line of piped stdin. */
async function readKey(): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) return (readFileSync(0, 'utf8').split('\n')[0] ?? '').trim();
  process.stderr.write('API key (not shown): ');
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let key = '';
    const done = (error?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(key.trim());
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') return done();
        if (char === '\u0003') return done(new Error('cancelled'));
        if (char === '\u007f' || char === '\b') key = key.slice(0, -1);
        else key += char;
      }
    };
    stdin.on('data', onData);
  });
}

/** `playline login`: checks a workspace id and API key against the server and saves them in a 0600 profile. */
export function loginCommand(): Command {
  return new Command('login')
    .description('Save a base URL, workspace id and API key (checked against the server) for api, sign, sign-playback and assets')
    .requiredOption('--owner <workspace_id>', 'the workspace')
    .option('--base-url <url>', 'where the server is (default: PLAYLINE_BASE_URL or http://127.0.0.1:8080)')
    .option('--profile <name>', 'save under this name (default: "default"; other commands take --profile or PLAYLINE_PROFILE)', DEFAULT_PROFILE)
    .option('--key <api_key>', 'the API key (default: PLAYLINE_API_KEY, else read from the terminal without echo, or from stdin)')
    .addHelpText('after', `
The profile lives in $XDG_CONFIG_HOME/playline/config.json (or ~/.config/playline/config.json),
readable by you only (0600). The key is never printed. Example:
  playline login --base-url http://127.0.0.1:8080 --owner <workspace id>      (then type or paste the key)`)
    .action(async (opts: { owner: string; baseUrl?: string; profile: string; key?: string }) => {
      const key = opts.key ?? process.env.PLAYLINE_API_KEY ?? (await readKey());
      if (key === '') throw new Error('No API key given');
      const baseUrl = resolveBaseUrl({ ...(opts.baseUrl !== undefined ? { baseUrl: opts.baseUrl } : {}), profile: DEFAULT_PROFILE });
      const url = signedUrl(baseUrl, '/api/v4/workspace', { owner: opts.owner, key, nowS: Math.floor(Date.now() / 1000) });
      const response = await fetchOrExplain(url, { headers: { 'user-agent': 'playline-cli' } });
      const answer = (await response.json().catch(() => ({}))) as { name?: string; code?: string; detail?: string };
      if (!response.ok) throw new Error(`${baseUrl} refused the workspace id and key: HTTP ${response.status}${answer.code ? ` ${answer.code}` : ''}${answer.detail ? `: ${answer.detail}` : ''}`);
      const path = saveProfile(opts.profile, { base_url: baseUrl, owner: opts.owner, key });
      process.stdout.write(`Signed in to ${baseUrl} as workspace ${opts.owner}${answer.name ? ` (${answer.name})` : ''}; profile "${opts.profile}" saved in ${path}\n`);
    });
}

/** `playline logout`: forgets a saved profile. */
export function logoutCommand(): Command {
  return new Command('logout')
    .description('Forget a saved profile')
    .option('--profile <name>', 'the profile', DEFAULT_PROFILE)
    .action((opts: { profile: string }) => {
      const removed = removeProfile(opts.profile);
      process.stdout.write(removed ? `Profile "${opts.profile}" removed from ${configPath()}\n` : `No profile "${opts.profile}" in ${configPath()}\n`);
    });
}
