import { Counter, Gauge, type Registry } from 'prom-client';
import type { StorageQuota } from './storage-quota.js';
import { quotaNames, type QuotaLimits, type QuotaName } from './workspace-quotas.js';

export type CountQuota = Exclude<QuotaName, 'storage_bytes'>;

/** A module's part in a workspace's usage: the counts of what it holds, read from the database. */
export interface UsagePart {
  readonly name: string;
  counts(workspaceId: string): Promise<Partial<Record<CountQuota, number>>>;
  /** For the metrics: how many workspaces hold at least `limits[quota]` of each quota this part counts. */
  workspacesAtLimit?(limits: QuotaLimits): Promise<Partial<Record<CountQuota, number>>>;
}

export interface QuotaUse {
  used: number;
  limit: number;
}

export interface UsageReport {
  quotas: Record<QuotaName, QuotaUse>;
  /** Where the stored bytes are (by source) and how many are held for writes under way. */
  storage: { bySource: Record<string, number>; reserved: number };
}

/** Each workspace's use of its quotas, gathered from the modules (counts) and the storage quota (bytes). */
export class WorkspaceUsage {
  private readonly parts: UsagePart[] = [];

  constructor(
    readonly storage: StorageQuota,
    readonly limits: QuotaLimits,
  ) {}

  register(part: UsagePart): void {
    this.parts.push(part);
  }

  async of(workspaceId: string): Promise<UsageReport> {
    const counts: Partial<Record<CountQuota, number>> = {};
    for (const part of this.parts) Object.assign(counts, await part.counts(workspaceId));
    const storage = await this.storage.use(workspaceId);
    const quotas = Object.fromEntries(
      quotaNames.map((name) => [name, { used: name === 'storage_bytes' ? storage.total : (counts[name] ?? 0), limit: this.limits[name] }]),
    ) as Record<QuotaName, QuotaUse>;
    return { quotas, storage: { bySource: storage.bySource, reserved: storage.reserved } };
  }

  async workspacesAtLimit(): Promise<Partial<Record<CountQuota, number>>> {
    const at: Partial<Record<CountQuota, number>> = {};
    for (const part of this.parts) if (part.workspacesAtLimit) Object.assign(at, await part.workspacesAtLimit(this.limits));
    return at;
  }
}

/**
 * Quota metrics without a label per workspace (their number is unbounded): refusals by quota
 * (this instance), and how many workspaces are at a count quota (the whole database). Returns
 * the hook the error handler calls for each refusal.
 */
export function registerQuotaMetrics(registry: Registry, usage: WorkspaceUsage): { refused(quota: string): void } {
  const refusals = new Counter({ name: 'playline_quota_refusals_total', help: 'Requests refused by a workspace quota (409 quota_exceeded, 507 storage_quota_exceeded), by quota (this instance)', labelNames: ['quota'] as const, registers: [registry] });
  new Gauge({
    name: 'playline_quota_workspaces_at_limit',
    help: 'Workspaces that hold as many as their quota allows (all instances), by count quota',
    labelNames: ['quota'] as const,
    registers: [registry],
    async collect() {
      const at = await usage.workspacesAtLimit();
      for (const [quota, n] of Object.entries(at)) this.set({ quota }, n);
    },
  });
  new Gauge({
    name: 'playline_quota_limit',
    help: 'The quota every workspace has (the settings), by quota',
    labelNames: ['quota'] as const,
    registers: [registry],
    collect() {
      for (const name of quotaNames) this.set({ quota: name }, usage.limits[name]);
    },
  });
  const known = new Set<string>([...quotaNames, 'live_input_files', 'live_input_bytes', 'webhook_subscriptions']);
  return { refused: (quota) => refusals.inc({ quota: known.has(quota) ? quota : 'other' }) };
}
