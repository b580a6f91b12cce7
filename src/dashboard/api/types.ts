/**
 * The response shapes the dashboard reads, taken from the modules' TypeBox schemas (one source
 * of truth). Type-only imports: nothing of the server ends up in the browser bundle.
 */
import type { Static } from '@sinclair/typebox';
import type { WorkspaceSchema } from '../../modules/workspaces/workspaces.schema.js';
import type { VodStatsBody, VodStatsCollectionBody, VodStatsSummaryBody, StatsBody } from '../../modules/vod-stats/vod-stats.schema.js';
import type { DeliveriesView, SettingsView, TestResultView } from '../../modules/error-reporting/error-reporting.schema.js';
import type { SyndicationSchedule, SyndicationTarget } from '../../modules/syndication/syndication.schema.js';
import type { ManagedSlicerTaskCollectionView, ManagedSlicerTaskView } from '../../modules/managed-slicers/managed-slicers.schema.js';
import type { Problem } from '../../platform/http/problem.js';

export type Workspace = Static<typeof WorkspaceSchema>;
export type VodStats = VodStatsBody;
export type VodStatsCollection = VodStatsCollectionBody;
export type VodStatsSummary = VodStatsSummaryBody;
export type Stats = StatsBody;
export type CallbackSettings = SettingsView;
export type CallbackTestResult = TestResultView;
export type CallbackDeliveries = DeliveriesView;
export type Target = SyndicationTarget;
export type Schedule = SyndicationSchedule;
export type SlicerTask = ManagedSlicerTaskView;
export type SlicerTaskCollection = ManagedSlicerTaskCollectionView;
export type ProblemBody = Problem;

/** The Collection wrapper every list answers with. */
export interface Collection<T> {
  '@id': string;
  '@type': 'Collection';
  items: T[];
  total_items: number;
}
