import { Command } from 'commander';
import { ingestGrantView } from '../modules/workspaces/ingest-grants.routes.js';
import { printObject, printRows } from './output.js';
import { addSettingOptions, storageKeys, withRuntime } from './storage-options.js';

const grantCommand = (name: string, description: string) =>
  addSettingOptions(new Command(name).description(description).option('--json', 'print JSON for scripts'), storageKeys).requiredOption(
    '--owner <workspace_id>',
    'the workspace whose statistics the ingest keys may write',
  );

const shown = (view: ReturnType<typeof ingestGrantView>) => ({
  workspace_id: view.workspace_id,
  grantee_id: view.grantee_id,
  created_at: new Date(view.created_at).toISOString(),
});

/** `playline ingest-grants grant|revoke|list`: which workspaces' ingest keys may submit events for a workspace. */
export function ingestGrantsCommand(): Command {
  const command = new Command('ingest-grants').description(
    "Let another workspace's ingest keys submit playback events for a workspace (a playback server serving several workspaces); takes effect within a second on running servers",
  );
  command.addCommand(
    grantCommand('grant', "Let the grantee's ingest keys submit events for --owner")
      .requiredOption('--grantee <workspace_id>', 'the workspace whose ingest keys may submit')
      .action(async (opts: Record<string, unknown>) => {
        const { grant } = await withRuntime(opts, (rt) => rt.ingestGrants.grant(String(opts.owner), String(opts.grantee)));
        printObject(shown(ingestGrantView(grant)), opts.json === true);
      }),
  );
  command.addCommand(
    grantCommand('revoke', "Stop the grantee's ingest keys submitting events for --owner (batches accepted before stay counted)")
      .requiredOption('--grantee <workspace_id>', 'the workspace whose ingest keys may no longer submit')
      .action(async (opts: Record<string, unknown>) => {
        const grant = await withRuntime(opts, (rt) => rt.ingestGrants.revoke(String(opts.owner), String(opts.grantee)));
        printObject(shown(ingestGrantView(grant)), opts.json === true);
      }),
  );
  command.addCommand(
    grantCommand('list', 'The workspaces whose ingest keys may submit events for --owner').action(async (opts: Record<string, unknown>) => {
      const grants = await withRuntime(opts, (rt) => rt.ingestGrants.list(String(opts.owner)));
      printRows(grants.map((g) => shown(ingestGrantView(g))), opts.json === true, ['workspace_id', 'grantee_id', 'created_at']);
    }),
  );
  return command;
}
