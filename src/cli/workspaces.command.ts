import { Command, Option } from 'commander';
import { apiKeyView, workspaceView } from '../modules/workspaces/workspaces.view.js';
import type { KeyKind } from '../platform/auth/signing-key.js';
import { printObject, printRows } from './output.js';
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

export function keysCommand(): Command {
  const command = new Command('keys').description('Create, list and revoke API keys and ingest keys');
  command.addCommand(
    dataCommand('create', 'Create a key; its secret is printed once')
      .requiredOption('--owner <workspace_id>', 'the workspace the key belongs to')
      .addOption(new Option('--kind <kind>', 'api: calls the owner\'s API; ingest: submits events for its workspace and those that granted it (ingest-grants), nothing else').choices(['api', 'ingest']).default('api'))
      .option('--label <label>', 'what the key is for', '')
      .action(async (opts: Record<string, unknown>) => {
        const key = await withRuntime(opts, (rt) => rt.workspaces.createKey(String(opts.owner), { kind: opts.kind as KeyKind, label: String(opts.label) }));
        const view = apiKeyView(key);
        printObject({ id: view.id, owner: view.owner, kind: view.kind, label: view.label, secret: view.secret }, opts.json === true);
        if (opts.json !== true) process.stderr.write('The secret is shown only this once.\n');
      }),
  );
  command.addCommand(
    dataCommand('list', 'List the keys of a workspace (never their secrets)')
      .requiredOption('--owner <workspace_id>', 'the workspace')
      .action(async (opts: Record<string, unknown>) => {
        const keys = await withRuntime(opts, async (rt) => (await rt.workspaces.listKeys(String(opts.owner))).map(apiKeyView));
        const rows = keys.map((k) => ({ ...k, created_at: new Date(k.created_at).toISOString(), revoked_at: k.revoked_at === null ? null : new Date(k.revoked_at).toISOString() }));
        printRows(rows, opts.json === true, ['id', 'kind', 'label', 'prefix', 'created_at', 'revoked_at']);
      }),
  );
  command.addCommand(
    dataCommand('revoke', 'Revoke a key: requests signed with it are refused (401 key_revoked) within two seconds')
      .argument('<key_id>', 'the key id (see keys list)')
      .requiredOption('--owner <workspace_id>', 'the workspace the key belongs to')
      .action(async (keyId: string, opts: Record<string, unknown>) => {
        const key = await withRuntime(opts, async (rt) => apiKeyView(await rt.workspaces.revokeKey(String(opts.owner), keyId)));
        printObject({ id: key.id, owner: key.owner, revoked_at: key.revoked_at === null ? null : new Date(key.revoked_at).toISOString() }, opts.json === true);
      }),
  );
  return command;
}
