import type { Clock } from '../../platform/clock.js';
import { AppError, type FieldViolation } from '../../platform/errors.js';
import type { IdGenerator } from '../../platform/ids.js';
import { parseTarget, targetValidationError, type ClippingProfileLookup, type ClippingProfileRef, type TargetParse } from './platform-rules.js';
import * as repo from './syndication.repository.js';
import type { TargetCreateBody, TargetStatus } from './syndication.schema.js';
import { targetStatusOf } from './schedule-status.js';
import { patchTarget } from './target-patch.js';
import { probeTarget, type ProbeOptions, type ProbeResult } from './target-probe.js';
import { openTarget, sealTarget, type SealedTarget, type SecretSealer } from './target-secrets.js';

/** A publishing target as the API shows it: sealed secrets, derived status. */
export interface TargetWithStatus {
  id: string;
  target: SealedTarget;
  pullUrl: string | null;
  status: TargetStatus;
}

export interface TargetServiceDeps {
  db: repo.SyndicationDb;
  box: SecretSealer;
  clock: Clock;
  ids: IdGenerator;
  probe: Omit<ProbeOptions, 'clock'>;
  /** Targets one workspace may hold (PLAYLINE_QUOTA_TARGETS). */
  maxTargets: number;
}

const withStatus = (stored: repo.StoredTarget): TargetWithStatus => ({
  id: stored.id,
  target: stored.target,
  pullUrl: stored.pullUrl,
  status: targetStatusOf(stored.counts),
});

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Publishing targets: create, read, PATCH (merge + validate whole), delete (not while in use),
 * and the connection test. Secrets are sealed before storage and never leave in clear.
 */
export class TargetService {
  constructor(private readonly deps: TargetServiceDeps) {}

  /** `schemaViolations`: what request-schema validation found, reported together with the rules'. */
  async create(workspaceId: string, body: unknown, schemaViolations: FieldViolation[] = []): Promise<TargetWithStatus> {
    const input = this.objectBody(body, schemaViolations);
    const target = validOrThrow(parseTarget(input, await this.profileLookup(workspaceId, [input])), schemaViolations);
    const id = this.deps.ids.hex();
    const sealed = sealTarget(target, this.deps.box);
    await repo.insertTargetWithinQuota(this.deps.db, id, workspaceId, sealed, this.deps.clock.now(), this.deps.maxTargets);
    return { id, target: sealed, pullUrl: null, status: 'stopped' };
  }

  async list(workspaceId: string): Promise<TargetWithStatus[]> {
    return (await repo.listTargets(this.deps.db, workspaceId)).map(withStatus);
  }

  async get(workspaceId: string, id: string): Promise<TargetWithStatus> {
    return withStatus(await this.stored(workspaceId, id));
  }

  async update(workspaceId: string, id: string, body: unknown, schemaViolations: FieldViolation[] = []): Promise<TargetWithStatus> {
    const input = this.objectBody(body, schemaViolations);
    const stored = await this.stored(workspaceId, id);
    const current = openTarget(stored.target, this.deps.box);
    // A GET shows a Custom hls target's pull URL as target_stream; sending it back changes nothing.
    const patch = stored.pullUrl !== null && input.target_stream === stored.pullUrl ? { ...input, target_stream: undefined } : input;
    const lookup = await this.profileLookup(workspaceId, [patch, current]);
    const target = validOrThrow(patchTarget(current, patch, lookup), schemaViolations);
    const sealed = sealTarget(target, this.deps.box, { sealed: stored.target, clear: current });
    const keepsPullUrl = target.platform === 'Custom' && target.target_protocol === 'hls';
    const pullUrl = keepsPullUrl ? stored.pullUrl : null;
    const updated = await repo.updateTarget(this.deps.db, workspaceId, id, sealed, pullUrl, this.deps.clock.now());
    if (!updated) throw this.notFound(id);
    return { id, target: sealed, pullUrl, status: targetStatusOf(stored.counts) };
  }

  async remove(workspaceId: string, id: string): Promise<void> {
    const deleted = await repo.deleteTargetUnlessActive(this.deps.db, workspaceId, id);
    if (deleted > 0) return;
    await this.stored(workspaceId, id);
    throw new AppError('conflict', `Publishing target ${id} is used by an active schedule; stop the schedule first`);
  }

  /** Connects to the target (RTMP handshake, HTTP check) and reports what happened. */
  async test(workspaceId: string, id: string): Promise<ProbeResult> {
    const stored = await this.stored(workspaceId, id);
    return probeTarget(openTarget(stored.target, this.deps.box), { ...this.deps.probe, clock: this.deps.clock });
  }

  /** The stored target in clear, for publishing. */
  async openForPublishing(workspaceId: string, id: string) {
    const stored = await this.stored(workspaceId, id);
    return { stored, target: openTarget(stored.target, this.deps.box) };
  }

  private async stored(workspaceId: string, id: string): Promise<repo.StoredTarget> {
    const stored = await repo.findTarget(this.deps.db, workspaceId, id);
    if (!stored) throw this.notFound(id);
    return stored;
  }

  private notFound(id: string): AppError {
    return new AppError('not_found', `Publishing target ${id} does not exist`);
  }

  private objectBody(body: unknown, schemaViolations: FieldViolation[]): Record<string, unknown> {
    if (isObject(body)) return body;
    throw new AppError('validation_failed', 'The body must be a JSON object', {
      errors: schemaViolations.length > 0 ? schemaViolations : [{ path: '/', message: 'must be a JSON object' }],
    });
  }

  /** The validator's lookup is synchronous: fetch the profile(s) the bodies name first. */
  private async profileLookup(workspaceId: string, bodies: Readonly<Record<string, unknown>>[]): Promise<ClippingProfileLookup> {
    const profiles = new Map<string, ClippingProfileRef>();
    for (const body of bodies) {
      const config = body.platform_config;
      const id = isObject(config) ? config.clipping_profile_id : undefined;
      if (typeof id !== 'string' || profiles.has(id)) continue;
      const row = await repo.findClippingProfile(this.deps.db, workspaceId, id);
      if (row) profiles.set(id, { integrations: JSON.parse(row.integrations) as { service: string }[] });
    }
    return (id) => profiles.get(id);
  }
}

/** The valid target, or the 400 naming rule violations plus schema violations at paths the rules did not name. */
function validOrThrow(parsed: TargetParse, schemaViolations: FieldViolation[]): TargetCreateBody {
  const violations = parsed.ok ? [] : parsed.violations;
  const named = new Set(violations.map((v) => v.path));
  const all = [...violations, ...schemaViolations.filter((v) => !named.has(v.path))];
  if (all.length > 0 || !parsed.ok) throw targetValidationError(all);
  return parsed.target;
}
