import type { Registry } from 'prom-client';
import type { Clock } from '../../platform/clock.js';
import type { Cluster } from '../../platform/cluster/cluster.js';
import type { Config } from '../../platform/config.js';
import type { Storage } from '../../platform/db/database.js';
import type { ErrorReportSink } from '../../platform/error-report-sink.js';
import type { IngestOwners } from './ingest/event-ingest.js';

/** The runtime pieces VOD statistics are built from (a structural subset of `Runtime`). */
export interface VodStatsDeps {
  config: Pick<Config, 'dataDir' | 'statsDelayMs' | 'logLevel' | 'maxAssetsPerWorkspace' | 'ingestMaxBytesInFlight' | 'statsRebuildOnMismatch'>;
  clock: Clock;
  storage: Pick<Storage, 'db'>;
  /** Where accepted error events go; read at each submit, so it may be replaced later. */
  errorReports: () => ErrorReportSink;
  metrics: { registry: Registry };
  /** Cluster mode: statistics in Redis, the journal in PostgreSQL. Undefined: embedded (memory and files). */
  cluster: Cluster | undefined;
  /** Which workspaces an ingest key may submit events for (ingest grants). */
  ingestOwners: IngestOwners;
}

/** What either ingest pipeline takes from the runtime: the clock, the error report sink, the ingest grants, a log for failures. */
export const pipelineDeps = (deps: VodStatsDeps, log: { error(obj: object, msg: string): void }) => ({
  clock: deps.clock,
  owners: deps.ingestOwners,
  errorReports: { submit: (report) => deps.errorReports().submit(report) } satisfies ErrorReportSink,
  onError: (message: string, err: unknown) => log.error({ err }, message),
});
