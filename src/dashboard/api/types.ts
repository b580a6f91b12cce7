/**
 * The response shapes the dashboard reads, taken from the modules' TypeBox schemas (one source
 * of truth). Type-only imports: nothing of the server ends up in the browser bundle.
 */
import type {
  SubscriptionCollectionView, SubscriptionCreateInput, SubscriptionView, SubscriptionWithSecretView, WebhookAttemptCollectionView, WebhookAttemptView, WebhookAttemptDetailView,
} from '../../modules/webhooks/webhooks.schema.js';
import type { Static } from '@sinclair/typebox';
import type { WorkspaceSchema } from '../../modules/workspaces/workspaces.schema.js';
import type {
  HistoryPointBody, HistoryRange, VodStatsBody, VodStatsCollectionBody, VodStatsHistoryBody, VodStatsSummaryBody, StatsBody,
} from '../../modules/vod-stats/vod-stats.schema.js';
import type { ApiKeyView } from '../../modules/workspaces/workspaces.schema.js';
import type { ContentShareView } from '../../modules/playback-edge/playback-edge.schema.js';
import type { WorkspaceUsageView } from '../../modules/workspaces/workspace-usage.schema.js';
import type {
  DeliveriesView, LoggedAttemptCollectionView, LoggedAttemptDetailView, LoggedAttemptView, SettingsView, TestResultView,
} from '../../modules/error-reporting/error-reporting.schema.js';
import type {
  ScheduleCreateBody, SchedulePatchBody, SyndicationSchedule, SyndicationTarget, TargetCreateBody, TargetPatchBody,
} from '../../modules/syndication/syndication.schema.js';
import type { AssetCollectionView, AssetView } from '../../modules/assets/assets.schema.js';
import type {
  ManagedSlicerCollectionView, ManagedSlicerTaskCollectionView, ManagedSlicerTaskView, ManagedSlicerView, SlicerCreateBody,
} from '../../modules/managed-slicers/managed-slicers.schema.js';

export type Workspace = Static<typeof WorkspaceSchema>;
export type { ServerSettingsView as ServerSettings } from '../../modules/server-info/server-info.schema.js';
export type WorkspaceUsage = WorkspaceUsageView;
export type QuotaUse = WorkspaceUsageView['quotas']['assets'];
export type VodStats = VodStatsBody;
export type VodStatsCollection = VodStatsCollectionBody;
export type VodStatsSummary = VodStatsSummaryBody;
export type Stats = StatsBody;
export type CallbackSettings = SettingsView;
export type CallbackTestResult = TestResultView;
export type CallbackDeliveries = DeliveriesView;
export type LoggedAttempt = LoggedAttemptView;
export type LoggedAttemptDetail = LoggedAttemptDetailView;
export type LoggedAttemptPage = LoggedAttemptCollectionView;
export type Target = SyndicationTarget;
export type Schedule = SyndicationSchedule;
export type SlicerTask = ManagedSlicerTaskView;
export type SlicerTaskCollection = ManagedSlicerTaskCollectionView;
export type Slicer = ManagedSlicerView;
export type SlicerCollection = ManagedSlicerCollectionView;
export type Asset = AssetView;
export type AssetCollection = AssetCollectionView;
export type History = VodStatsHistoryBody;
export type HistoryPoint = HistoryPointBody;
export type { HistoryRange };
export type ApiKey = ApiKeyView;
export type ContentShare = ContentShareView;
export type WebhookSubscription = SubscriptionView;
export type WebhookSubscriptionWithSecret = SubscriptionWithSecretView;
export type WebhookSubscriptionCollection = SubscriptionCollectionView;
export type NewWebhookSubscription = SubscriptionCreateInput;
export type WebhookAttempt = WebhookAttemptView;
export type WebhookAttemptDetail = WebhookAttemptDetailView;
export type WebhookAttemptCollection = WebhookAttemptCollectionView;
export type NewSlicer = SlicerCreateBody;
export type NewTarget = TargetCreateBody;
export type TargetPatch = TargetPatchBody;
export type NewSchedule = ScheduleCreateBody;
export type SchedulePatch = SchedulePatchBody;
export interface Region {
  id: string;
  name: string;
}

/** The Collection wrapper every list answers with. */
export interface Collection<T> {
  '@id': string;
  '@type': 'Collection';
  items: T[];
  total_items: number;
}
