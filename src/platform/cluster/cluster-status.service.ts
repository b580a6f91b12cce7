import type { Cluster } from './cluster.js';
import type { ClusterStatus } from './cluster-status.schema.js';

/**
 * The state of the statistics the instances share, as the status shows it (implemented by
 * vod-stats' StatsRebuild in cluster mode).
 */
export interface SharedStatsState {
  /** A rebuild of the statistics from the journal is running. */
  running(): Promise<boolean>;
  /** When the statistics were last started or rebuilt (Unix ms); null: never. */
  builtAt(): Promise<number | null>;
}

/** Cluster mode's pieces the status reads; undefined in the embedded mode. */
export interface ClusterDeployment {
  cluster: Pick<Cluster, 'instanceId' | 'membership'>;
  stats: SharedStatsState;
}

/** The deployment as an operator sees it (admin API and CLI); the embedded mode has one answer. */
export class ClusterStatusService {
  constructor(private readonly deployment: ClusterDeployment | undefined) {}

  async status(): Promise<ClusterStatus> {
    const base = { '@id': '/api/v4/admin/cluster', '@type': 'ClusterStatus' } as const;
    if (this.deployment === undefined) {
      return { ...base, mode: 'embedded', instance_id: null, instances: [], stats: { rebuilding: false, built_at: null } };
    }
    const { cluster, stats } = this.deployment;
    const [members, rebuilding, builtAt] = await Promise.all([cluster.membership.members(), stats.running(), stats.builtAt()]);
    return {
      ...base,
      mode: 'cluster',
      instance_id: cluster.instanceId,
      instances: members.map((m) => ({
        id: m.id,
        beat_at: m.beatAt,
        // Reported by the statistics in every heartbeat; an instance that never journaled has nothing uncounted.
        counted_before: m.report.countedBefore ?? m.beatAt,
        alive: m.alive,
      })),
      stats: { rebuilding, built_at: builtAt },
    };
  }
}
