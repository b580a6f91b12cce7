import type { Command } from 'commander';
import { PlaylineClient } from '../client/index.js';
import { resolveCredentials } from './profiles.js';

/** The flags of a command that calls a running server's API. */
export interface ApiOptions {
  baseUrl?: string;
  owner?: string;
  key?: string;
  profile?: string;
  json?: boolean;
}

/** Who signed this process's API calls (workspace and where the key came from), for the message of a refused signature. */
let signedAs: string | undefined;
export const credentialsInUse = (): string | undefined => signedAs;

/** A client signed with the flags, else PLAYLINE_API_KEY / PLAYLINE_BASE_URL, else the saved profile (playline login). */
export const clientOf = (opts: ApiOptions): PlaylineClient => {
  const { baseUrl, owner, key, keySource } = resolveCredentials(opts);
  signedAs = `workspace ${owner}, key from ${keySource}`;
  return new PlaylineClient({ baseUrl, owner, apiKey: key });
};

/** The options every API command shares: where the server is and who signs. */
export const withApiOptions = (command: Command): Command =>
  command
    .option('--owner <workspace_id>', 'the workspace that signs (default: the profile\'s, see playline login)')
    .option('--key <api_key>', 'the API key (prefer PLAYLINE_API_KEY or playline login: flags show up in shell history)')
    .option('--base-url <url>', 'where the server is (default: PLAYLINE_BASE_URL, the profile\'s, or http://127.0.0.1:8080)')
    .option('--profile <name>', 'the saved sign-in to use (default: PLAYLINE_PROFILE or "default")')
    .option('--json', 'print JSON on stdout (progress stays on stderr)');
