import { Command } from 'commander';
import type { ContentShareView } from '../modules/playback-edge/playback-edge.schema.js';
import { clientOf, withApiOptions, type ApiOptions } from './api-options.js';
import { printRows } from './output.js';

const MODEL = `
Content is private to its workspace. Another workspace plays your assets and live events
with its own signed URLs (coid=<your workspace id>) only when you share your content with
it; anyone else gets playback error 102. An asset with a private-asset entry
(/api/v4/playback/private-assets) plays only for the workspaces that entry lists, shared
or not.`;

const row = (s: ContentShareView) => ({ grantee_id: s.grantee_id, shared_at: new Date(s.created_at).toISOString() });

/** `playline shares ...`: the workspaces the signing workspace shares its content with, over a running server's API. */
export function sharesCommand(): Command {
  const shares = new Command('shares')
    .description('The workspaces that may play your content (assets and live events) with coid=<your workspace>')
    .addHelpText('after', MODEL);

  withApiOptions(shares.command('list').description('List the workspaces your content is shared with')).action(async (opts: ApiOptions) => {
    const items = await clientOf(opts).workspace.shares();
    if (opts.json) process.stdout.write(`${JSON.stringify(items, null, 2)}\n`);
    else printRows(items.map(row), false, ['grantee_id', 'shared_at']);
  });

  withApiOptions(
    shares
      .command('add')
      .description('Share your content with a workspace: its own signed URLs with coid=<your workspace> play your assets and live events')
      .argument('<workspace_id>', 'the workspace to share with')
      .addHelpText('after', MODEL),
  ).action(async (granteeId: string, opts: ApiOptions) => {
    const share = await clientOf(opts).workspace.share(granteeId);
    if (opts.json) process.stdout.write(`${JSON.stringify(share, null, 2)}\n`);
    else process.stdout.write(`shared with ${share.grantee_id}: its URLs with coid=${share.workspace_id} play your assets and live events\n`);
  });

  withApiOptions(
    shares
      .command('remove')
      .description('Stop sharing your content with a workspace: its URLs naming you in coid answer 102 again')
      .argument('<workspace_id>', 'the workspace to stop sharing with'),
  ).action(async (granteeId: string, opts: ApiOptions) => {
    const deleted = await clientOf(opts).workspace.unshare(granteeId);
    if (opts.json) process.stdout.write(`${JSON.stringify(deleted, null, 2)}\n`);
    else process.stdout.write(`no longer shared with ${granteeId}\n`);
  });

  return shares;
}
