import { Type, type Static } from '@sinclair/typebox';

const QuotaUseSchema = (what: string) =>
  Type.Object({
    used: Type.Integer({ description: `${what} the workspace holds now` }),
    limit: Type.Integer({ description: `${what} it may hold (the server's setting)` }),
  });

export const WorkspaceUsageSchema = Type.Object({
  '@id': Type.Literal('/api/v4/workspace/usage'),
  '@type': Type.Literal('WorkspaceUsage'),
  workspace_id: Type.String(),
  quotas: Type.Object({
    storage_bytes: QuotaUseSchema('Media bytes (uploads, packaged assets, live windows, hls-push input and live events being recorded, and bytes held for uploads being received)'),
    assets: QuotaUseSchema('Assets'),
    slicers: QuotaUseSchema('Managed slicers'),
    targets: QuotaUseSchema('Publishing targets'),
    schedules: QuotaUseSchema('Publishing schedules'),
    active_pushes: QuotaUseSchema('Started publishing schedules (active, or in error and retrying: one push each)'),
  }),
  storage: Type.Object({
    by_source: Type.Record(Type.String(), Type.Integer(), { description: 'Stored bytes by where they are: assets (uploads and packaged output), live (live windows, hls-push input and recordings under way of the slicers)' }),
    reserved: Type.Integer({ description: 'Bytes held for uploads and pushes being received (part of storage_bytes.used)' }),
  }),
});
export type WorkspaceUsageView = Static<typeof WorkspaceUsageSchema>;
