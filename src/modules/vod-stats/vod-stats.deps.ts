import type { Registry } from 'prom-client';
import type { Clock } from '../../platform/clock.js';
import type { Cluster } from '../../platform/cluster/cluster.js';
import type { Config } from '../../platform/config.js';
import type { Storage } from '../../platform/db/database.js';
import type { ErrorReportSink } from '../../platform/error-report-sink.js';
import type { Logger } from '../../platform/logger.js';
import type { IngestOwners } from './ingest/event-ingest.js';

/** The runtime pieces VOD statistics are built from (a structural subset of `Runtime`). */
export interface VodStatsDeps {
  config: Pick<Config, 'dataDir' | 'statsDelayMs' | 'maxAssetsPerWorkspace' | 'ingestMaxBytesInFlight' | 'statsRebuildOnMismatch'>;
  clock: Clock;
  storage: Pick<Storage, 'db'>;
  /** Where accepted error events go (the Error Reporting dispatcher). */
  errorReports: ErrorReportSink;
  metrics: { registry: Registry };
  /** Cluster mode: statistics in Redis, the journal in PostgreSQL. Undefined: embedded (memory and files). */
  cluster: Cluster | undefined;
  /** Which workspaces an ingest key may submit events for (ingest grants). */
  ingestOwners: IngestOwners;
  /** The module's logger (a child of the runtime's root). */
  log: Logger;
  /** The ids among those given that are workspaces (statistics of the others are swept away). */
  existingWorkspaces(ids: readonly string[]): Promise<Set<string>>;
}

/** What either ingest pipeline takes from the runtime: the clock, the error report sink, the ingest grants, a log for failures. */
export const pipelineDeps = (deps: VodStatsDeps) => ({
  clock: deps.clock,
  owners: deps.ingestOwners,
  errorReports: deps.errorReports,
  onError: (message: string, err: unknown) => deps.log.error({ err }, message),
});
