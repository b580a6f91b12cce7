import { sql, type Kysely } from 'kysely';
import type { Database } from '../../platform/db/schema.js';
import type { SealedTarget, SecretFieldName, SealedSecrets } from './target-secrets.js';
import type {
  SyndicationClippingProfileTable,
  SyndicationScheduleTable,
  SyndicationTables,
  SyndicationTargetTable,
} from './syndication.tables.js';
import type { ScheduleCounts } from './schedule-status.js';
import { lockWorkspace, quotaExceeded } from '../../platform/quota/workspace-quotas.js';

/**
 * Storage of targets, schedules and clipping profiles. Every query is scoped by workspace, so
 * another workspace's rows are simply not found. Targets go in and out as `SealedTarget`:
 * secrets reach the row only sealed.
 */
export type SyndicationDb = Kysely<Database & SyndicationTables>;

export interface StoredTarget {
  id: string;
  workspaceId: string;
  target: SealedTarget;
  pullUrl: string | null;
  counts: ScheduleCounts;
}

export type ScheduleRow = SyndicationScheduleTable;
export type ClippingProfileRow = SyndicationClippingProfileTable;

const targetColumns = (target: SealedTarget) => ({
  description: target.description,
  platform: target.platform,
  target_protocol: target.target_protocol,
  platform_config: JSON.stringify(target.platform_config),
  secrets_sealed: target.secrets,
  secret_fields: target.secret_fields.join(','),
});

type TargetRowWithCounts = SyndicationTargetTable & { active_count: number | string | null; error_count: number | string | null };

const toStoredTarget = (row: TargetRowWithCounts): StoredTarget => ({
  id: row.id,
  workspaceId: row.workspace_id,
  target: {
    description: row.description,
    platform: row.platform as SealedTarget['platform'],
    target_protocol: row.target_protocol as SealedTarget['target_protocol'],
    platform_config: JSON.parse(row.platform_config) as SealedTarget['platform_config'],
    secrets: row.secrets_sealed as SealedSecrets,
    secret_fields: row.secret_fields === '' ? [] : (row.secret_fields.split(',') as SecretFieldName[]),
  },
  pullUrl: row.pull_url,
  counts: { active: Number(row.active_count ?? 0), error: Number(row.error_count ?? 0) },
});

/**
 * Targets with the counts of their active and error schedules (what their status is derived
 * from). Plain portable SQL rather than the query builder: this runs on every target read and
 * PATCH, and building the two correlated subqueries cost more than executing them.
 */
const targetsWithCounts = sql`
  select t.*,
    (select count(*) from syndication_schedules s where s.target_id = t.id and s.status = 'active') as active_count,
    (select count(*) from syndication_schedules s where s.target_id = t.id and s.status = 'error') as error_count
  from syndication_targets t`;

export async function insertTarget(db: SyndicationDb, id: string, workspaceId: string, target: SealedTarget, now: number): Promise<void> {
  await db
    .insertInto('syndication_targets')
    .values({ id, workspace_id: workspaceId, ...targetColumns(target), pull_url: null, created_at: now, updated_at: now })
    .execute();
}

/** The workspace of a managed slicer (a live event's content id), or undefined when no slicer has that id. */
export async function slicerWorkspaceOf(db: SyndicationDb, slicerId: string): Promise<string | undefined> {
  const row = await db.selectFrom('managed_slicers').select('workspace_id').where('id', '=', slicerId).executeTakeFirst();
  return row?.workspace_id;
}

export async function findTarget(db: SyndicationDb, workspaceId: string, id: string): Promise<StoredTarget | undefined> {
  const { rows } = await sql<TargetRowWithCounts>`${targetsWithCounts} where t.workspace_id = ${workspaceId} and t.id = ${id}`.execute(db);
  return rows[0] ? toStoredTarget(rows[0]) : undefined;
}

export async function listTargets(db: SyndicationDb, workspaceId: string): Promise<StoredTarget[]> {
  const { rows } = await sql<TargetRowWithCounts>`${targetsWithCounts} where t.workspace_id = ${workspaceId} order by t.created_at, t.id`.execute(db);
  return rows.map(toStoredTarget);
}

/** Replaces the target's fields; returns false when it does not exist in the workspace. Hot path (every PATCH): plain SQL. */
export async function updateTarget(
  db: SyndicationDb,
  workspaceId: string,
  id: string,
  target: SealedTarget,
  pullUrl: string | null,
  now: number,
): Promise<boolean> {
  const c = targetColumns(target);
  const result = await sql`
    update syndication_targets
    set description = ${c.description}, platform = ${c.platform}, target_protocol = ${c.target_protocol},
        platform_config = ${c.platform_config}, secrets_sealed = ${c.secrets_sealed}, secret_fields = ${c.secret_fields},
        pull_url = ${pullUrl}, updated_at = ${now}
    where workspace_id = ${workspaceId} and id = ${id}`.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
}

export async function setPullUrl(db: SyndicationDb, workspaceId: string, id: string, pullUrl: string, now: number): Promise<void> {
  await db
    .updateTable('syndication_targets')
    .set({ pull_url: pullUrl, updated_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .execute();
}

/**
 * Deletes the target (and its inactive schedules, by cascade) in one statement, unless a
 * schedule using it is active. Returns how many rows went (0: missing or in use).
 */
export async function deleteTargetUnlessActive(db: SyndicationDb, workspaceId: string, id: string): Promise<number> {
  const result = await db
    .deleteFrom('syndication_targets')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb.selectFrom('syndication_schedules').select('id').where('target_id', '=', id).where('status', '=', 'active'),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

// ---- schedules ----

export async function insertSchedule(db: SyndicationDb, row: ScheduleRow): Promise<void> {
  await db.insertInto('syndication_schedules').values(row).execute();
}

export const findSchedule = (db: SyndicationDb, workspaceId: string, id: string): Promise<ScheduleRow | undefined> =>
  db.selectFrom('syndication_schedules').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();

export function listSchedules(db: SyndicationDb, workspaceId: string, targetId?: string): Promise<ScheduleRow[]> {
  let query = db.selectFrom('syndication_schedules').selectAll().where('workspace_id', '=', workspaceId);
  if (targetId !== undefined) query = query.where('target_id', '=', targetId);
  return query.orderBy('created_at').orderBy('id').execute();
}

/**
 * Writes schedule fields only if its status is still `expectedStatus` (compare-and-set, so two
 * concurrent actions cannot both win). Returns false when the row changed or does not exist.
 */
export async function updateSchedule(
  db: SyndicationDb,
  workspaceId: string,
  id: string,
  expectedStatus: string,
  values: Partial<Omit<ScheduleRow, 'id' | 'workspace_id' | 'created_at'>>,
): Promise<boolean> {
  const result = await db
    .updateTable('syndication_schedules')
    .set(values)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', expectedStatus)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteScheduleUnlessActive(db: SyndicationDb, workspaceId: string, id: string): Promise<number> {
  const result = await db
    .deleteFrom('syndication_schedules')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '!=', 'active')
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

// ---- clipping profiles ----

export async function insertClippingProfile(db: SyndicationDb, row: ClippingProfileRow): Promise<void> {
  await db.insertInto('syndication_clipping_profiles').values(row).execute();
}

export const findClippingProfile = (db: SyndicationDb, workspaceId: string, id: string): Promise<ClippingProfileRow | undefined> =>
  db.selectFrom('syndication_clipping_profiles').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();

export const listClippingProfiles = (db: SyndicationDb, workspaceId: string): Promise<ClippingProfileRow[]> =>
  db.selectFrom('syndication_clipping_profiles').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').orderBy('id').execute();

/** Deletes every schedule, target and clipping profile of a workspace (deleting the workspace); rows deleted. */
export async function deleteWorkspaceRows(db: SyndicationDb, workspaceId: string): Promise<number> {
  let rows = 0;
  for (const table of ['syndication_schedules', 'syndication_targets', 'syndication_clipping_profiles'] as const) {
    rows += Number((await db.deleteFrom(table).where('workspace_id', '=', workspaceId).executeTakeFirst()).numDeletedRows);
  }
  return rows;
}

/** The schedules of a workspace that are publishing or retrying after an error (to stop before the workspace goes). */
export const listActiveSchedules = (db: SyndicationDb, workspaceId: string): Promise<ScheduleRow[]> =>
  db.selectFrom('syndication_schedules').selectAll().where('workspace_id', '=', workspaceId).where('status', 'in', ['active', 'error']).execute();

/** Every schedule of every workspace that was started and not stopped (pushes to resume after a restart). */
export const listStartedSchedules = (db: SyndicationDb): Promise<ScheduleRow[]> =>
  db.selectFrom('syndication_schedules').selectAll().where('status', 'in', ['active', 'error']).orderBy('created_at').orderBy('id').execute();

/** The started schedules whose push ran on `instance` (a dead instance's, to take over). */
export const listPushesOf = (db: SyndicationDb, instance: string): Promise<ScheduleRow[]> =>
  db.selectFrom('syndication_schedules').selectAll().where('publisher_instance', '=', instance).where('status', 'in', ['active', 'error']).orderBy('created_at').orderBy('id').execute();

/** Moves a started schedule's push from instance `from` to `to`; false when another survivor took it first (or it stopped). */
export async function claimPush(db: SyndicationDb, id: string, from: string, to: string): Promise<boolean> {
  const result = await db
    .updateTable('syndication_schedules')
    .set({ publisher_instance: to })
    .where('id', '=', id)
    .where('publisher_instance', '=', from)
    .where('status', 'in', ['active', 'error'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A target's workspace and generated pull URL, found by id alone (the pull URL's token is the credential). */
export const findPullTarget = (db: SyndicationDb, id: string): Promise<{ workspace_id: string; pull_url: string | null } | undefined> =>
  db.selectFrom('syndication_targets').select(['workspace_id', 'pull_url']).where('id', '=', id).executeTakeFirst();

/** The content an active schedule of the target publishes (the oldest, when there are several). */
export const findActiveContentOfTarget = async (db: SyndicationDb, workspaceId: string, targetId: string): Promise<string | undefined> =>
  (
    await db
      .selectFrom('syndication_schedules')
      .select('content_id')
      .where('workspace_id', '=', workspaceId)
      .where('target_id', '=', targetId)
      .where('status', '=', 'active')
      .orderBy('created_at')
      .orderBy('id')
      .executeTakeFirst()
  )?.content_id;

// ---- quotas ----

/** The statuses of a started schedule: its push runs (active) or retries (error). */
const STARTED = ['active', 'error'];

const countOf = async (query: { executeTakeFirstOrThrow(): Promise<{ n: number | string | bigint }> }): Promise<number> => Number((await query.executeTakeFirstOrThrow()).n);

/** What a workspace holds of its publishing quotas: targets, schedules and started schedules (pushes). */
export async function countPublishing(db: SyndicationDb, workspaceId: string): Promise<{ targets: number; schedules: number; active_pushes: number }> {
  const schedules = db.selectFrom('syndication_schedules').where('workspace_id', '=', workspaceId);
  const [targets, all, started] = await Promise.all([
    countOf(db.selectFrom('syndication_targets').where('workspace_id', '=', workspaceId).select((eb) => eb.fn.countAll<number>().as('n'))),
    countOf(schedules.select((eb) => eb.fn.countAll<number>().as('n'))),
    countOf(schedules.where('status', 'in', STARTED).select((eb) => eb.fn.countAll<number>().as('n'))),
  ]);
  return { targets, schedules: all, active_pushes: started };
}

/** Inserts a target while the workspace holds fewer than `max` (decided one at a time per workspace), else 409 quota_exceeded. */
export function insertTargetWithinQuota(db: SyndicationDb, id: string, workspaceId: string, target: SealedTarget, now: number, max: number): Promise<void> {
  return db.transaction().execute(async (trx) => {
    await lockWorkspace(trx, workspaceId);
    const held = await countOf(trx.selectFrom('syndication_targets').where('workspace_id', '=', workspaceId).select((eb) => eb.fn.countAll<number>().as('n')));
    if (held >= max) throw quotaExceeded('targets', max, held);
    await insertTarget(trx, id, workspaceId, target, now);
  });
}

/** Inserts a schedule while the workspace holds fewer than `max`, else 409 quota_exceeded. */
export function insertScheduleWithinQuota(db: SyndicationDb, row: ScheduleRow, max: number): Promise<void> {
  return db.transaction().execute(async (trx) => {
    await lockWorkspace(trx, row.workspace_id);
    const held = await countOf(trx.selectFrom('syndication_schedules').where('workspace_id', '=', row.workspace_id).select((eb) => eb.fn.countAll<number>().as('n')));
    if (held >= max) throw quotaExceeded('schedules', max, held);
    await insertSchedule(trx, row);
  });
}

/**
 * Starts a schedule (writes `values`, status `active`, if its status is still `expectedStatus`)
 * while fewer than `max` other schedules of its workspace are started, else 409 quota_exceeded;
 * decided one at a time per workspace, before any push is spawned. False when the row changed.
 */
export function startWithinQuota(db: SyndicationDb, workspaceId: string, id: string, expectedStatus: string, values: Partial<ScheduleRow>, max: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await lockWorkspace(trx, workspaceId);
    const started = await countOf(
      trx.selectFrom('syndication_schedules').where('workspace_id', '=', workspaceId).where('status', 'in', STARTED).where('id', '!=', id).select((eb) => eb.fn.countAll<number>().as('n')),
    );
    if (started >= max) throw quotaExceeded('active_pushes', max, started);
    return updateSchedule(trx, workspaceId, id, expectedStatus, { ...values, status: 'active' });
  });
}

/** Workspaces at each publishing quota (metrics). */
export async function workspacesAtPublishingLimits(db: SyndicationDb, limits: { targets: number; schedules: number; active_pushes: number }): Promise<{ targets: number; schedules: number; active_pushes: number }> {
  const atLeast = async (query: { execute(): Promise<unknown[]> }) => (await query.execute()).length;
  const schedules = db.selectFrom('syndication_schedules').select('workspace_id').groupBy('workspace_id');
  const [targets, all, started] = await Promise.all([
    atLeast(db.selectFrom('syndication_targets').select('workspace_id').groupBy('workspace_id').having((eb) => eb.fn.countAll(), '>=', limits.targets)),
    atLeast(schedules.having((eb) => eb.fn.countAll(), '>=', limits.schedules)),
    atLeast(schedules.where('status', 'in', STARTED).having((eb) => eb.fn.countAll(), '>=', limits.active_pushes)),
  ]);
  return { targets, schedules: all, active_pushes: started };
}
