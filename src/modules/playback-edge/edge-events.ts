import type { PlaybackEvent } from '../vod-stats/events.schema.js';

/**
 * Event fields the statistics schema does not take yet. The lead adds them to the event schema
 * and both statistics stores, then turns them on here (`PENDING_EVENT_FEATURES`); until then
 * the edge emits events exactly as the schema stands, and `todo` tests show what is expected.
 */
export interface EdgeEventFeatures {
  /** A refusal naming an asset the workspace's library does not hold counts at the workspace level only (`workspace_only: true`). */
  workspaceOnly: boolean;
  /** `start` events carry `startup_ms`; a CMCD buffer-starvation flag emits a `rebuffer` event (history only). */
  historySignals: boolean;
}

export const PENDING_EVENT_FEATURES: EdgeEventFeatures = { workspaceOnly: false, historySignals: false };

/** A rebuffering a player reported (CMCD `bs`) for a session. */
export interface RebufferEvent {
  type: 'rebuffer';
  owner: string;
  asset_id: string;
  session_id: string;
  ts: number;
}

/** What the edge emits: playback events, with the pending fields when turned on. */
export type EdgeEvent = (PlaybackEvent & { workspace_only?: true; startup_ms?: number }) | RebufferEvent;
