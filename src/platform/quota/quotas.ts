import type { Registry } from 'prom-client';
import type { BackgroundWork } from '../background-work.js';
import type { Clock } from '../clock.js';
import type { Config, DeploymentMode } from '../config.js';
import type { Db } from '../db/database.js';
import { StorageQuota } from './storage-quota.js';
import { quotaLimitsOf, type QuotaLimits } from './workspace-quotas.js';
import { registerQuotaMetrics, WorkspaceUsage } from './workspace-usage.js';

/** The quotas of every workspace: limits, the storage quota and its reservations, the usage the API and metrics show. */
export interface Quotas {
  limits: QuotaLimits;
  storage: StorageQuota;
  usage: WorkspaceUsage;
  /** Counts a refusal (the error handler calls it with the refused quota). */
  refused(quota: string): void;
  /** Clears reservations left by a stopped process (embedded: all of them; cluster: the expired). */
  work: BackgroundWork;
}

/** Slack on top of the time a held body may take to arrive before its reservation stops counting. */
const HOLD_SLACK_MS = 60_000;

export function createQuotas(deps: { db: Db; clock: Clock; config: Config; mode: DeploymentMode; registry: Registry }): Quotas {
  const { config } = deps;
  const limits = quotaLimitsOf(config);
  // A streamed body must average PLAYLINE_STREAMED_BODY_MIN_RATE once the request timeout passed:
  // one of `bytes` is received (or cut) within that time, so its reservation can expire after it.
  const holdMs = (bytes: number) => config.requestTimeoutMs + Math.ceil((bytes / config.streamedBodyMinRate) * 1000) + HOLD_SLACK_MS;
  const storage = new StorageQuota({ db: deps.db, clock: deps.clock, limitBytes: limits.storage_bytes, holdMs });
  const usage = new WorkspaceUsage(storage, limits);
  const metrics = registerQuotaMetrics(deps.registry, usage);
  const embedded = deps.mode === 'embedded';
  return {
    limits,
    storage,
    usage,
    refused: metrics.refused,
    work: {
      name: 'storage reservations',
      start: async () => {
        // Embedded: this process is the only writer, so every reservation left is a dead one's.
        if (embedded) await deps.db.deleteFrom('storage_reservations').execute();
        else await storage.sweepExpired();
      },
      stop: async () => undefined,
    },
  };
}
