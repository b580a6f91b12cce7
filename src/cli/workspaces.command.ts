import { Command, Option } from 'commander';
import { PlaylineClient } from '../client/index.js';
import type { ApiKeyView } from '../modules/workspaces/workspaces.schema.js';
import { apiKeyView, workspaceView } from '../modules/workspaces/workspaces.view.js';
import type { KeyKind } from '../platform/auth/signing-key.js';
import { printObject, printRows } from './output.js';
import { resolveCredentials } from './profiles.js';
import { addSettingOptions, storageKeys, withRuntime } from './storage-options.js';

const dataCommand = (name: string, description: string) =>
  addSettingOptions(new Command(name).description(description).option('--json', 'print JSON for scripts'), storageKeys);

export function workspacesCommand(): Command {
  const command = new Command('workspaces').description('Create, list and delete workspaces (on the server\'s data dir or database, running or not)');
  command.addCommand(
    dataCommand('create', 'Create a workspace and print its id')
      .requiredOption('--name <name>', 'a name people recognise')
      .action(async (opts: Record<string, unknown>) => {
        const view = await withRuntime(opts, async (rt) => workspaceView(await rt.workspaces.createWorkspace(String(opts.name))), { mayCreate: true });
        printObject({ id: view.id, name: view.name, created_at: new Date(view.created_at).toISOString() }, opts.json === true);
      }),
  );
  command.addCommand(
    dataCommand('list', 'List workspaces').action(async (opts: Record<string, unknown>) => {
      const rows = await withRuntime(opts, async (rt) => (await rt.workspaces.listWorkspaces()).map((w) => workspaceView(w)));
      printRows(rows.map((w) => ({ id: w.id, name: w.name, created_at: new Date(w.created_at).toISOString() })), opts.json === true, ['id', 'name', 'created_at']);
    }),
  );
  command.addCommand(
    dataCommand('delete', 'Delete a workspace with all its data: keys, publishing targets and schedules, slicers and tasks, playback catalogue, callback settings, statistics')
      .argument('<workspace_id>', 'the workspace (see workspaces list)')
      .option('--yes', 'confirm: the deletion cannot be undone')
      .addHelpText('after', `
A running embedded server notices within a minute (statistics) or two seconds (keys, callbacks);
with a server running, the admin API (DELETE /api/v4/admin/workspaces/<id>) deletes at once.`)
      .action(async (id: string, opts: Record<string, unknown>) => {
        const result = await withRuntime(opts, async (rt) => {
          const workspace = await rt.workspaces.getWorkspace(id);
          if (opts.yes !== true) return { refused: workspace.name };
          return { deleted: await rt.workspaceDeletion.delete(id) };
        });
        if ('refused' in result) throw new Error(`deleting workspace ${id} (${result.refused}) removes all its data and cannot be undone: run again with --yes`);
        const { deleted } = result;
        if (opts.json === true) printObject({ id: deleted.id, name: deleted.name, deleted: deleted.deleted }, true);
        else printObject({ id: deleted.id, name: deleted.name, deleted: Object.entries(deleted.deleted).map(([part, n]) => `${part} ${n}`).join(', ') }, false);
      }),
  );
  return command;
}

/**
 * `--via-api`: the keys command goes through the running server's signed API (POST/GET/DELETE
 * /api/v4/workspace/keys) as the signed-in workspace (flags, PLAYLINE_API_KEY or the profile of
 * playline login), instead of opening the data directory or database.
 */
const viaApiOptions = (command: Command): Command =>
  command
    .option('--via-api', 'go through the running server\'s API, signed as your workspace (no data dir or database access needed)')
    .option('--key <api_key>', 'with --via-api: the API key that signs (prefer PLAYLINE_API_KEY or playline login: flags show up in shell history)')
    .option('--base-url <url>', 'with --via-api: where the server is (default: PLAYLINE_BASE_URL, the profile\'s, or http://127.0.0.1:8080)')
    .option('--profile <name>', 'with --via-api: the saved sign-in to use (default: PLAYLINE_PROFILE or "default")');

const apiClientOf = (opts: Record<string, unknown>): PlaylineClient => {
  const str = (name: string) => (typeof opts[name] === 'string' ? (opts[name] as string) : undefined);
  const { baseUrl, owner, key } = resolveCredentials({ owner: str('owner'), key: str('key'), baseUrl: str('baseUrl'), profile: str('profile') });
  return new PlaylineClient({ baseUrl, owner, apiKey: key });
};

const ownerOf = (opts: Record<string, unknown>): string => {
  if (typeof opts.owner !== 'string') throw new Error('--owner <workspace_id> is required (or use --via-api to act as the signed-in workspace)');
  return opts.owner;
};

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function keysCommand(): Command {
  const command = new Command('keys').description('Create, list and revoke API keys and ingest keys');
  command.addCommand(
    viaApiOptions(dataCommand('create', 'Create a key; its secret is printed once'))
      .option('--owner <workspace_id>', 'the workspace the key belongs to (with --via-api: the one that signs)')
      .addOption(new Option('--kind <kind>', 'api: calls the owner\'s API; ingest: submits events for its workspace and those that granted it (ingest-grants), nothing else').choices(['api', 'ingest']).default('api'))
      .option('--label <label>', 'what the key is for', '')
      .action(async (opts: Record<string, unknown>) => {
        const options = { kind: opts.kind as KeyKind, label: String(opts.label) };
        let view: ApiKeyView;
        if (opts.viaApi === true) view = await apiClientOf(opts).workspace.createKey(options);
        else {
          const owner = ownerOf(opts);
          view = await withRuntime(opts, async (rt) => apiKeyView(await rt.workspaces.createKey(owner, options)));
        }
        printObject({ id: view.id, owner: view.owner, kind: view.kind, label: view.label, secret: view.secret }, opts.json === true);
        if (opts.json !== true) process.stderr.write('The secret is shown only this once.\n');
      }),
  );
  command.addCommand(
    viaApiOptions(dataCommand('list', 'List the keys of a workspace (never their secrets)'))
      .option('--owner <workspace_id>', 'the workspace (with --via-api: the one that signs)')
      .action(async (opts: Record<string, unknown>) => {
        let keys: ApiKeyView[];
        if (opts.viaApi === true) keys = await apiClientOf(opts).workspace.keys();
        else {
          const owner = ownerOf(opts);
          keys = await withRuntime(opts, async (rt) => (await rt.workspaces.listKeys(owner)).map(apiKeyView));
        }
        const rows = keys.map((k) => ({ ...k, created_at: new Date(k.created_at).toISOString(), revoked_at: isoOrNull(k.revoked_at) }));
        printRows(rows, opts.json === true, ['id', 'kind', 'label', 'prefix', 'created_at', 'revoked_at']);
      }),
  );
  command.addCommand(
    viaApiOptions(dataCommand('revoke', 'Revoke a key: requests signed with it are refused (401 key_revoked) within two seconds'))
      .argument('<key_id>', 'the key id (see keys list)')
      .option('--owner <workspace_id>', 'the workspace the key belongs to (with --via-api: the one that signs)')
      .action(async (keyId: string, opts: Record<string, unknown>) => {
        let key: ApiKeyView;
        if (opts.viaApi === true) key = await apiClientOf(opts).workspace.revokeKey(keyId);
        else {
          const owner = ownerOf(opts);
          key = await withRuntime(opts, async (rt) => apiKeyView(await rt.workspaces.revokeKey(owner, keyId)));
        }
        printObject({ id: key.id, owner: key.owner, revoked_at: isoOrNull(key.revoked_at) }, opts.json === true);
      }),
  );
  return command;
}
