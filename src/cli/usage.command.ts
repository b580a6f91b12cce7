import { Command } from 'commander';
import { clientOf, withApiOptions, type ApiOptions } from './api-options.js';
import { printRows } from './output.js';

/** Bytes as people read them (binary units), exact below 1 KiB. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`;
}

/** `playline usage`: the signed-in workspace's quotas, what it uses of each and the limit. */
export function usageCommand(): Command {
  return withApiOptions(
    new Command('usage')
      .description('Your workspace\'s quotas on a running server: for each, what it uses and its limit')
      .addHelpText('after', `
Creating beyond a quota answers 409 quota_exceeded, storing beyond the storage quota 507
storage_quota_exceeded; the server's settings (PLAYLINE_QUOTA_*) set the limits. --json prints the
API's answer (GET /api/v4/workspace/usage).`),
  ).action(async (opts: ApiOptions) => {
    const usage = await clientOf(opts).workspace.usage();
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(usage, null, 2)}\n`);
      return;
    }
    const rows = Object.entries(usage.quotas).map(([quota, { used, limit }]) => {
      const show = quota === 'storage_bytes' ? formatBytes : String;
      return { quota, used: show(used), limit: show(limit), share: `${limit > 0 ? Math.floor((used / limit) * 100) : 0}%` };
    });
    printRows(rows, false, ['quota', 'used', 'limit', 'share']);
  });
}
