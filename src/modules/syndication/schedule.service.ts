import type { Clock } from '../../platform/clock.js';
import { AppError, type FieldViolation } from '../../platform/errors.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { PublishJob, Publisher } from './publisher.js';
import { scheduleTransition, type ScheduleAction, type ScheduleStatus } from './schedule-status.js';
import * as repo from './syndication.repository.js';
import type { ScheduleCreateBody, SchedulePatchBody, TargetCreateBody } from './syndication.schema.js';
import type { TargetService } from './target.service.js';

export interface ScheduleServiceDeps {
  db: repo.SyndicationDb;
  clock: Clock;
  ids: IdGenerator;
  targets: TargetService;
  publisher: Publisher;
  /** Region names schedules may use (configuration). */
  regions: readonly string[];
  /** Base of generated pull URLs of Custom hls targets, e.g. `https://pull.example.com`. */
  pullBaseUrl: string;
}

/**
 * Publishing schedules: CRUD (no edit or delete while active) and the start/stop actions,
 * which drive the publisher and thereby the derived status of the target.
 */
export class ScheduleService {
  constructor(private readonly deps: ScheduleServiceDeps) {}

  async create(workspaceId: string, body: ScheduleCreateBody): Promise<repo.ScheduleRow> {
    await this.checkReferences(workspaceId, body);
    const now = this.deps.clock.now();
    const row: repo.ScheduleRow = {
      id: this.deps.ids.hex(),
      workspace_id: workspaceId,
      target_id: body.syndication_target_id,
      content_id: body.content_id,
      content_type: body.content_type,
      region: body.region,
      scte35_enabled: body.scte35_enabled ?? 0,
      source_url_params: body.source_url_params ?? '',
      status: 'stopped',
      error: null,
      created_at: now,
      updated_at: now,
    };
    await repo.insertSchedule(this.deps.db, row);
    return row;
  }

  list(workspaceId: string, targetId?: string): Promise<repo.ScheduleRow[]> {
    return repo.listSchedules(this.deps.db, workspaceId, targetId);
  }

  async get(workspaceId: string, id: string): Promise<repo.ScheduleRow> {
    const row = await repo.findSchedule(this.deps.db, workspaceId, id);
    if (!row) throw new AppError('not_found', `Publishing schedule ${id} does not exist`);
    return row;
  }

  async update(workspaceId: string, id: string, body: SchedulePatchBody): Promise<repo.ScheduleRow> {
    const row = await this.get(workspaceId, id);
    if (row.status === 'active') throw this.activeConflict(id, 'changed');
    await this.checkReferences(workspaceId, body);
    const values = {
      ...(body.syndication_target_id !== undefined ? { target_id: body.syndication_target_id } : {}),
      ...(body.content_id !== undefined ? { content_id: body.content_id } : {}),
      ...(body.content_type !== undefined ? { content_type: body.content_type } : {}),
      ...(body.region !== undefined ? { region: body.region } : {}),
      ...(body.scte35_enabled !== undefined ? { scte35_enabled: body.scte35_enabled } : {}),
      ...(body.source_url_params !== undefined ? { source_url_params: body.source_url_params } : {}),
      updated_at: this.deps.clock.now(),
    };
    if (!(await repo.updateSchedule(this.deps.db, workspaceId, id, row.status, values))) throw this.raced(id);
    return { ...row, ...values };
  }

  async remove(workspaceId: string, id: string): Promise<void> {
    if ((await repo.deleteScheduleUnlessActive(this.deps.db, workspaceId, id)) > 0) return;
    await this.get(workspaceId, id);
    throw this.activeConflict(id, 'deleted');
  }

  /**
   * start: publish (an error to start leaves the schedule in `error`); stop: stop publishing.
   * Repeating the current action changes nothing. Starting a Custom hls target's schedule
   * generates the target's pull URL once.
   */
  async act(workspaceId: string, id: string, mode: ScheduleAction): Promise<repo.ScheduleRow> {
    const row = await this.get(workspaceId, id);
    const transition = scheduleTransition(row.status as ScheduleStatus, mode);
    if (!transition.ok) throw new AppError('conflict', `Publishing schedule ${id}: ${transition.reason}`);
    if (!transition.changed) return row;
    const job = await this.jobFor(row);
    let status: ScheduleStatus = 'stopped';
    let error: string | null = null;
    if (mode === 'start') {
      const outcome = await this.deps.publisher.start(job);
      status = outcome.ok ? 'active' : 'error';
      error = outcome.ok ? null : outcome.reason;
    } else {
      await this.deps.publisher.stop(job);
    }
    const values = { status, error, updated_at: this.deps.clock.now() };
    if (!(await repo.updateSchedule(this.deps.db, workspaceId, id, row.status, values))) {
      if (status === 'active') await this.deps.publisher.stop(job);
      throw this.raced(id);
    }
    return { ...row, ...values };
  }

  /** Publishing broke after it started (reported by the publisher): the schedule goes to `error`. */
  async markFailed(workspaceId: string, id: string, reason: string): Promise<repo.ScheduleRow> {
    const row = await this.get(workspaceId, id);
    const transition = scheduleTransition(row.status as ScheduleStatus, 'fail');
    if (!transition.ok) throw new AppError('conflict', `Publishing schedule ${id}: ${transition.reason}`);
    const values = { status: transition.status, error: reason, updated_at: this.deps.clock.now() };
    if (!(await repo.updateSchedule(this.deps.db, workspaceId, id, row.status, values))) throw this.raced(id);
    return { ...row, ...values };
  }

  private async jobFor(row: repo.ScheduleRow): Promise<PublishJob> {
    const { stored, target } = await this.deps.targets.openForPublishing(row.workspace_id, row.target_id);
    let pullUrl = stored.pullUrl;
    if (isHlsPull(target) && pullUrl === null) {
      pullUrl = `${this.deps.pullBaseUrl.replace(/\/+$/, '')}/syndication-pull/${stored.id}/${this.deps.ids.hex()}/playlist.m3u8`;
      await repo.setPullUrl(this.deps.db, row.workspace_id, stored.id, pullUrl, this.deps.clock.now());
    }
    return {
      workspaceId: row.workspace_id,
      scheduleId: row.id,
      targetId: stored.id,
      target,
      contentId: row.content_id,
      contentType: row.content_type,
      region: row.region,
      scte35Enabled: row.scte35_enabled === 1,
      sourceUrlParams: row.source_url_params,
      pullUrl,
    };
  }

  private async checkReferences(workspaceId: string, body: Partial<ScheduleCreateBody>): Promise<void> {
    const violations: FieldViolation[] = [];
    if (body.region !== undefined && !this.deps.regions.includes(body.region)) {
      violations.push({ path: '/region', message: `must be one of: ${this.deps.regions.join(', ')}` });
    }
    if (body.syndication_target_id !== undefined) {
      const target = await repo.findTarget(this.deps.db, workspaceId, body.syndication_target_id);
      if (!target) violations.push({ path: '/syndication_target_id', message: 'names no publishing target of this workspace' });
    }
    if (violations.length > 0) {
      throw new AppError('validation_failed', `The schedule breaks ${violations.length} rule(s)`, { errors: violations });
    }
  }

  private activeConflict(id: string, what: string): AppError {
    return new AppError('conflict', `Publishing schedule ${id} is active and cannot be ${what}; stop it first`);
  }

  private raced(id: string): AppError {
    return new AppError('conflict', `Publishing schedule ${id} changed meanwhile; read it again and retry`);
  }
}

const isHlsPull = (target: TargetCreateBody): boolean => target.platform === 'Custom' && target.target_protocol === 'hls';
