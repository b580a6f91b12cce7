import { AppError } from '../errors.js';
import type { Cluster, ClusterStats } from '../../modules/vod-stats/vod-stats.cluster.js';
import type { ClusterStatus, RebuildResultView } from './cluster-status.schema.js';

/** Cluster mode's pieces an operator deals with; undefined in the embedded mode. */
export interface ClusterDeployment {
  cluster: Cluster;
  stats: ClusterStats;
}

/** What an operator asks of the cluster (admin API and CLI); the embedded mode has one answer. */
export class ClusterAdminService {
  constructor(private readonly deployment: ClusterDeployment | undefined) {}

  async status(): Promise<ClusterStatus> {
    const base = { '@id': '/api/v4/admin/cluster', '@type': 'ClusterStatus' } as const;
    if (this.deployment === undefined) {
      return { ...base, mode: 'embedded', instance_id: null, instances: [], stats: { rebuilding: false, built_at: null } };
    }
    const { cluster, stats } = this.deployment;
    const [members, rebuilding, builtAt] = await Promise.all([stats.node.members(), stats.rebuild.running(), cluster.redis.get(stats.rebuild.epochKey)]);
    return {
      ...base,
      mode: 'cluster',
      instance_id: cluster.instanceId,
      instances: members.map((m) => ({ id: m.id, beat_at: m.beatAt, counted_before: m.countedBefore, alive: m.alive })),
      stats: { rebuilding, built_at: builtAt === null ? null : Number(builtAt) },
    };
  }

  /** Rebuilds the Redis statistics from the PostgreSQL journal; 409 while another rebuild runs. */
  async rebuildStats(): Promise<RebuildResultView> {
    if (this.deployment === undefined) {
      throw new AppError('conflict', 'The embedded mode keeps statistics in memory and restores them from its journal on start; there is nothing to rebuild');
    }
    const result = await this.deployment.stats.rebuild.rebuild();
    if (result === 'busy') throw new AppError('conflict', 'A rebuild of the statistics is already running; see GET /api/v4/admin/cluster');
    return { '@type': 'StatsRebuild', batches: result.batches, events: result.events, last_seq: result.lastSeq };
  }
}
