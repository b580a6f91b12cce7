import type { Clock } from '../../platform/clock.js';
import { AppError, type FieldViolation } from '../../platform/errors.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { OperationalEventSink } from '../../platform/operational-events.js';
import type { PublishJob, PublishOutcome, Publisher } from './publisher.js';
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
  /** Cluster mode: this instance, recorded on each schedule whose push it runs (a survivor takes over a dead one's). */
  instanceId?: string;
  /** Per workspace: schedules it may hold (PLAYLINE_QUOTA_SCHEDULES), schedules started at once (PLAYLINE_QUOTA_ACTIVE_PUSHES). */
  quota: { schedules: number; activePushes: number };
  /** Operational events: publishing.active and publishing.error as a schedule's status changes to them. */
  events?: OperationalEventSink;
}

/**
 * Publishing schedules: CRUD (no edit or delete while active) and the start/stop actions,
 * which drive the publisher and thereby the derived status of the target.
 */
export class ScheduleService {
  /** Per schedule, the action or publishing report being applied: they run one after another. */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: ScheduleServiceDeps) {}

  /** Runs `work` after everything queued for schedule `id` (so a report never overtakes the start that caused it). */
  private serial<T>(id: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(id) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.then(() => undefined, () => undefined);
    this.queues.set(id, settled);
    void settled.then(() => {
      if (this.queues.get(id) === settled) this.queues.delete(id);
    });
    return next;
  }

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
    await repo.insertScheduleWithinQuota(this.deps.db, row, this.deps.quota.schedules);
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
  act(workspaceId: string, id: string, mode: ScheduleAction): Promise<repo.ScheduleRow> {
    return this.serial(id, () => this.actNow(workspaceId, id, mode));
  }

  private async actNow(workspaceId: string, id: string, mode: ScheduleAction): Promise<repo.ScheduleRow> {
    const row = await this.get(workspaceId, id);
    const transition = scheduleTransition(row.status as ScheduleStatus, mode);
    if (!transition.ok) throw new AppError('conflict', `Publishing schedule ${id}: ${transition.reason}`);
    if (!transition.changed) return row;
    const job = await this.jobFor(row);
    let status: ScheduleStatus = 'stopped';
    let error: string | null = null;
    let expected = row.status;
    if (mode === 'start') {
      // Started in the database first, within the workspace's push quota (409 quota_exceeded
      // beyond, and no push is spawned); then the push starts.
      const admitted = { error: null, updated_at: this.deps.clock.now(), ...this.pushOwner(true) };
      if (!(await repo.startWithinQuota(this.deps.db, workspaceId, id, row.status, admitted, this.deps.quota.activePushes))) throw this.raced(id);
      expected = 'active';
      let outcome: PublishOutcome;
      try {
        outcome = await this.deps.publisher.start(job);
      } catch (err) {
        // Refused before any push ran (the content is not live...): the schedule is as it was.
        const previous = { status: row.status, error: row.error, updated_at: this.deps.clock.now(), ...(this.deps.instanceId === undefined ? {} : { publisher_instance: row.publisher_instance ?? null }) };
        await repo.updateSchedule(this.deps.db, workspaceId, id, 'active', previous);
        throw err;
      }
      status = outcome.ok ? 'active' : 'error';
      error = outcome.ok ? null : outcome.reason;
    } else {
      await this.deps.publisher.stop(job);
    }
    const values = { status, error, updated_at: this.deps.clock.now(), ...this.pushOwner(mode === 'start') };
    if (!(await repo.updateSchedule(this.deps.db, workspaceId, id, expected, values))) {
      // Lost the race: whatever this start set going (running or retrying) must not run on.
      if (mode === 'start') await this.deps.publisher.stop(job);
      throw this.raced(id);
    }
    const updated = { ...row, ...values };
    if (mode === 'start') this.statusChanged(updated);
    return updated;
  }

  /**
   * What a running push reports: `error` with the reason, or `active` again once a retry got
   * the stream accepted. A schedule stopped meanwhile stays stopped. Never throws (the reporter
   * is a background push); returns the row as it is now, or undefined when it is gone.
   */
  applyPushReport(workspaceId: string, id: string, report: { state: 'active' } | { state: 'error'; reason: string }): Promise<repo.ScheduleRow | undefined> {
    return this.serial(id, async () => {
      const row = await repo.findSchedule(this.deps.db, workspaceId, id);
      if (!row) return row;
      // A stopped schedule cannot fail or recover: the report came after the stop.
      const transition = scheduleTransition(row.status as ScheduleStatus, report.state === 'active' ? 'recover' : 'fail');
      if (!transition.ok) return row;
      const error = report.state === 'error' ? report.reason : null;
      if (!transition.changed && row.error === error) return row;
      const values = { status: transition.status, error, updated_at: this.deps.clock.now() };
      if (!(await repo.updateSchedule(this.deps.db, workspaceId, id, row.status, values))) return repo.findSchedule(this.deps.db, workspaceId, id);
      const updated = { ...row, ...values };
      if (transition.changed) this.statusChanged(updated);
      return updated;
    }).catch(() => undefined);
  }

  /** A schedule's status became active or error: its operational event (webhooks). */
  private statusChanged(row: repo.ScheduleRow): void {
    if (row.status !== 'active' && row.status !== 'error') return;
    this.deps.events?.emit(row.workspace_id, row.status === 'active' ? 'publishing.active' : 'publishing.error', {
      schedule_id: row.id,
      target_id: row.target_id,
      content_id: row.content_id,
      content_type: row.content_type,
      status: row.status,
      error: row.error,
    });
  }

  /**
   * After a restart: every schedule that was started and not stopped gets its push again (the
   * push reports how it goes). One that cannot start (its content is no longer live, the target
   * can no longer be published to) goes to `error` with the reason. Returns how many resumed.
   */
  async resumePublishing(): Promise<number> {
    const started = await repo.listStartedSchedules(this.deps.db);
    const failed = (row: repo.ScheduleRow) => (err: unknown) => {
      const reason = err instanceof AppError ? err.detail : 'publishing could not be resumed after a restart';
      return this.applyPushReport(row.workspace_id, row.id, { state: 'error', reason });
    };
    // A workspace started more than its push quota allows (the quota was lowered): the oldest
    // resume, the rest are stopped with the reason instead of spawning a push.
    const { rows, beyond } = withinPushQuota(started, this.deps.quota.activePushes);
    for (const row of beyond) {
      const error = `Not resumed after a restart: the workspace may have ${this.deps.quota.activePushes} started schedules at once (PLAYLINE_QUOTA_ACTIVE_PUSHES); start it again once another is stopped`;
      await repo.updateSchedule(this.deps.db, row.workspace_id, row.id, row.status, { status: 'stopped', error, updated_at: this.deps.clock.now(), ...this.pushOwner(false) });
    }
    for (const row of rows) {
      // Not awaited: a push takes its time to be accepted, and reports how it went itself.
      void this.jobFor(row).then((job) => this.deps.publisher.start(job)).catch(failed(row));
    }
    return rows.length;
  }

  /**
   * Cluster mode: the started schedules whose push ran on `deadInstance` get their push here
   * (each claimed by one survivor only). Returns how many this instance took.
   */
  async takeOverPushes(deadInstance: string): Promise<number> {
    const me = this.deps.instanceId;
    if (me === undefined) return 0;
    let taken = 0;
    for (const row of await repo.listPushesOf(this.deps.db, deadInstance)) {
      if (!(await repo.claimPush(this.deps.db, row.id, deadInstance, me))) continue;
      taken += 1;
      const reason = (err: unknown) => (err instanceof AppError ? err.detail : 'publishing could not be taken over from a dead instance');
      void this.jobFor(row)
        .then((job) => this.deps.publisher.start(job))
        .catch((err: unknown) => this.applyPushReport(row.workspace_id, row.id, { state: 'error', reason: reason(err) }));
    }
    return taken;
  }

  /** Who runs the push: this instance once started (cluster mode), nobody once stopped. */
  private pushOwner(started: boolean): { publisher_instance?: string | null } {
    if (this.deps.instanceId === undefined) return {};
    return { publisher_instance: started ? this.deps.instanceId : null };
  }

  /**
   * Whether a push for this schedule and target should go on: it is started (active or error),
   * its target exists, and (cluster mode) no survivor took the push over from this instance.
   */
  async stillPublishing(workspaceId: string, id: string, targetId: string): Promise<boolean> {
    const row = await repo.findSchedule(this.deps.db, workspaceId, id);
    if (!row || row.status === 'stopped' || row.target_id !== targetId) return false;
    if (this.deps.instanceId !== undefined && row.publisher_instance !== this.deps.instanceId) return false;
    return (await repo.findTarget(this.deps.db, workspaceId, targetId)) !== undefined;
  }

  /** Publishing broke after it started (reported by the publisher): the schedule goes to `error`. */
  markFailed(workspaceId: string, id: string, reason: string): Promise<repo.ScheduleRow> {
    return this.serial(id, () => this.markFailedNow(workspaceId, id, reason));
  }

  private async markFailedNow(workspaceId: string, id: string, reason: string): Promise<repo.ScheduleRow> {
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
    if (body.content_id !== undefined) {
      // Issue 35: another workspace's slicer was accepted here and refused only at start. Its own
      // content only: an id no slicer has is left to the start (a channel, or a slicer made later).
      const owner = await repo.slicerWorkspaceOf(this.deps.db, body.content_id);
      if (owner !== undefined && owner !== workspaceId) violations.push({ path: '/content_id', message: 'names no live content of this workspace' });
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

/** The started schedules each workspace may keep (the oldest `max`), and those beyond. */
function withinPushQuota(started: readonly repo.ScheduleRow[], max: number): { rows: repo.ScheduleRow[]; beyond: repo.ScheduleRow[] } {
  const perWorkspace = new Map<string, number>();
  const rows: repo.ScheduleRow[] = [];
  const beyond: repo.ScheduleRow[] = [];
  for (const row of started) {
    const n = (perWorkspace.get(row.workspace_id) ?? 0) + 1;
    perWorkspace.set(row.workspace_id, n);
    (n <= max ? rows : beyond).push(row);
  }
  return { rows, beyond };
}

const isHlsPull = (target: TargetCreateBody): boolean => target.platform === 'Custom' && target.target_protocol === 'hls';
