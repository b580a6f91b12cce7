import type {
  ManagedSlicerCollectionView,
  ManagedSlicerTaskCollectionView,
  ManagedSlicerTaskView,
  ManagedSlicerView,
} from './managed-slicers.schema.js';
import type { SlicerWithTask, TaskRecord } from './slicer-store.js';

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

export const slicerView = ({ slicer, task }: SlicerWithTask): ManagedSlicerView => ({
  '@id': `${SLICERS_PATH}/${slicer.id}`,
  '@type': 'ManagedSlicer',
  id: slicer.id,
  name: slicer.config.name,
  ...(slicer.config.description !== undefined ? { description: slicer.config.description } : {}),
  region: slicer.config.region,
  ingest_protocol: slicer.config.ingest_protocol,
  output_profile: slicer.config.output_profile,
  state: slicer.state,
  ingest_url: slicer.ingestUrl,
  created_at: slicer.createdAt,
  updated_at: slicer.updatedAt,
  task: { id: task.id, state: task.state, operation: task.operation },
});

/** The restart answer, as the published sample shows it: `@id` is the restart resource that was called. */
export const restartView = (restarted: SlicerWithTask): ManagedSlicerView => ({
  ...slicerView(restarted),
  '@id': `${SLICERS_PATH}/restart/${restarted.slicer.id}`,
});

export const taskCollectionView = (selfPath: string, tasks: TaskRecord[], total: number): ManagedSlicerTaskCollectionView => ({
  '@id': selfPath,
  '@type': 'Collection',
  items: tasks.map(taskView),
  total_items: total,
});

export const slicerCollectionView = (selfPath: string, slicers: SlicerWithTask[], total: number): ManagedSlicerCollectionView => ({
  '@id': selfPath,
  '@type': 'Collection',
  items: slicers.map(slicerView),
  total_items: total,
});
