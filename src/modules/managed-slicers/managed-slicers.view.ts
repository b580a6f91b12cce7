import type {
  ManagedSlicerCollectionView,
  ManagedSlicerTaskCollectionView,
  ManagedSlicerTaskView,
  ManagedSlicerView,
} from './managed-slicers.schema.js';
import type { LiveStatus } from './live-slicer-process.js';
import type { SlicerRecord, SlicerWithKey, TaskRecord } from './slicer-store.js';
import { ingestUrlWithKey } from './stream-key.js';

export const SLICERS_PATH = '/api/v4/managed-slicer/slicers';
export const TASKS_PATH = '/api/v4/managed-slicer/slicers/tasks';

export const taskView = (task: TaskRecord): ManagedSlicerTaskView => ({
  '@id': `${TASKS_PATH}/${task.id}`,
  '@type': 'ManagedSlicerTask',
  id: task.id,
  operation: task.operation,
  state: task.state,
  timestamp: Math.floor(task.createdAt / 1000),
  slicer_id: task.slicerId,
  ...(task.state === 'FAILED' && task.failureReason !== null ? { failure_reason: task.failureReason } : {}),
});

/** The additive `live` part of a slicer: its process's state and input health. */
export const liveView = (status: LiveStatus): NonNullable<ManagedSlicerView['live']> => ({
  state: status.state,
  ...(status.failureReason !== null ? { failure_reason: status.failureReason } : {}),
  input_bitrate_kbps: status.inputKbps,
  last_frame_at: status.lastFrameAt,
  restarts: status.restarts,
  ...(status.recording ? { recording: status.recording } : {}),
});

/** The slicer as its own workspace sees it: `ingest_url` carries the stream key, so this goes to no one else. */
export const slicerView = ({ slicer, task, streamKey }: SlicerWithKey, live?: LiveStatus): ManagedSlicerView => ({
  '@id': `${SLICERS_PATH}/${slicer.id}`,
  '@type': 'ManagedSlicer',
  id: slicer.id,
  name: slicer.config.name,
  ...(slicer.config.description !== undefined ? { description: slicer.config.description } : {}),
  region: slicer.config.region,
  ingest_protocol: slicer.config.ingest_protocol,
  output_profile: slicer.config.output_profile,
  ...(slicer.config.dvr_window_s !== undefined ? { dvr_window_s: slicer.config.dvr_window_s } : {}),
  record: slicer.config.record !== false,
  state: slicer.state,
  ingest_url: ingestUrlWithKey(slicer.config.ingest_protocol, slicer.ingestUrl, streamKey),
  created_at: slicer.createdAt,
  updated_at: slicer.updatedAt,
  task: { id: task.id, state: task.state, operation: task.operation },
  ...(live ? { live: liveView(live) } : {}),
});

/** The restart answer, as the published sample shows it: `@id` is the restart resource that was called. */
export const restartView = (restarted: SlicerWithKey, live?: LiveStatus): ManagedSlicerView => ({
  ...slicerView(restarted, live),
  '@id': `${SLICERS_PATH}/restart/${restarted.slicer.id}`,
});

export const taskCollectionView = (selfPath: string, tasks: TaskRecord[], total: number): ManagedSlicerTaskCollectionView => ({
  '@id': selfPath,
  '@type': 'Collection',
  items: tasks.map(taskView),
  total_items: total,
});

export const slicerCollectionView = (
  selfPath: string,
  slicers: SlicerWithKey[],
  total: number,
  live: (slicer: SlicerRecord) => LiveStatus | undefined = () => undefined,
): ManagedSlicerCollectionView => ({
  '@id': selfPath,
  '@type': 'Collection',
  items: slicers.map((s) => slicerView(s, live(s.slicer))),
  total_items: total,
});
