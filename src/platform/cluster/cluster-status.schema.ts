import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';

export const ClusterMemberSchema = Type.Object({
  id: Type.String({ description: 'Instance id (host:pid:random)' }),
  beat_at: Type.Integer({ description: 'Last heartbeat, Unix ms (the instance\'s clock)' }),
  counted_before: Type.Integer({ description: 'Every batch it journaled before this time (Unix ms) is counted in Redis' }),
  alive: Type.Boolean({ description: 'Heartbeat seen within the last 15 s; a dead instance is swept (its last batches counted) and removed' }),
});

export const ClusterStatusSchema = Type.Object({
  '@id': Type.Literal('/api/v4/admin/cluster'),
  '@type': Type.Literal('ClusterStatus'),
  mode: Type.Union([Type.Literal('embedded'), Type.Literal('cluster')]),
  instance_id: Type.Union([Type.String(), Type.Null()], { description: 'The instance that answered (null in the embedded mode)' }),
  instances: Type.Array(ClusterMemberSchema),
  stats: Type.Object({
    rebuilding: Type.Boolean({ description: 'A rebuild of the Redis statistics from the journal is running' }),
    built_at: Type.Union([Type.Integer(), Type.Null()], { description: 'When Redis statistics were last started or rebuilt (Unix ms); null: none yet' }),
  }),
});
export type ClusterStatus = Static<typeof ClusterStatusSchema>;
