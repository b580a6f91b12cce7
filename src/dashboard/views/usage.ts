import type { QuotaUse, WorkspaceUsage } from '../api/types.js';
import { h } from '../dom.js';
import { bytes, count, isMissingRoute } from '../format.js';
import { KeyedTable } from '../keyed-table.js';
import { Poller } from '../poller.js';
import { ProblemLine, scroller, section } from './parts.js';
import type { View, ViewContext } from './view.js';

interface QuotaRow extends QuotaUse {
  quota: string;
}

const names: Record<string, string> = {
  storage_bytes: 'Stored media (uploads, packaged assets, live windows, hls push)',
  assets: 'Assets',
  slicers: 'Managed slicers',
  targets: 'Publishing targets',
  schedules: 'Publishing schedules',
  active_pushes: 'Started schedules (pushes at once)',
};

/** A share of a limit, in whole percent (rounded down: 100 % means the limit is reached). */
const share = (row: QuotaUse): number => (row.limit > 0 ? Math.floor((row.used / row.limit) * 100) : 0);

/** The workspace's quotas: what it uses of each and the limit; near or at a limit is marked. */
export function usageView(ctx: ViewContext): View {
  const problem = new ProblemLine();
  const show = (row: QuotaRow, n: number) => (row.quota === 'storage_bytes' ? bytes(n) : count(n));
  const table = new KeyedTable<QuotaRow>(
    [
      { header: 'Quota', text: (r) => names[r.quota] ?? r.quota },
      { header: 'Used', text: (r) => show(r, r.used), numeric: true },
      { header: 'Limit', text: (r) => show(r, r.limit), numeric: true },
      {
        header: 'Share',
        text: (r) => `${share(r)} %`,
        numeric: true,
        cellClass: (r) => (r.used >= r.limit ? 'badge status-error' : share(r) >= 80 ? 'badge status-warn' : 'badge status-active'),
        title: (r) => (r.used >= r.limit ? 'At the limit: creating or storing more is refused' : ''),
      },
    ],
    (r) => r.quota,
    'Quotas',
  );
  table.element.id = 'usage';

  const element = h(
    'div',
    { class: 'view', id: 'view-usage' },
    section(
      'Quotas',
      h('p', { class: 'muted' }, 'The server\'s limits per workspace. Beyond a count the API answers 409 quota_exceeded; beyond the stored bytes 507 storage_quota_exceeded.'),
      problem.element,
      scroller(table.element),
    ),
  );

  const poller = new Poller(async () => {
    try {
      const usage: WorkspaceUsage = await ctx.api.usage();
      problem.clear();
      table.update(Object.entries(usage.quotas).map(([quota, use]) => ({ quota, ...use })));
    } catch (err) {
      problem.show(err, isMissingRoute(err) ? 'This server does not report quotas: ' : 'Could not load the usage: ');
    }
  }, Math.max(ctx.intervalMs, 5000));

  return { element, show: () => poller.start(), hide: () => poller.stop() };
}
