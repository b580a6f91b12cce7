/**
 * Bytes held for a write that is under way (an upload being received, a push to an hls slicer),
 * so that concurrent writes of one workspace cannot all slip under its storage quota. A row is
 * removed when its write is stored (its bytes are then counted where they landed) or fails;
 * one whose instance died stops counting at `expires_at`. A deleted workspace's rows go with it
 * (the foreign key cascades).
 */
export interface StorageReservationTable {
  id: string;
  workspace_id: string;
  bytes: number;
  expires_at: number;
}

export interface QuotaTables {
  storage_reservations: StorageReservationTable;
}

declare module '../db/schema.js' {
  interface Database extends QuotaTables {}
}
