import type { Clock } from '../../platform/clock.js';
import { listSetting, type Config } from '../../platform/config.js';
import type { Db } from '../../platform/db/database.js';
import type { IdGenerator } from '../../platform/ids.js';
import { parseCallbackAllowList } from '../../platform/net/callback-allowlist.js';
import { SsrfGuard } from '../../platform/net/ssrf-guard.js';
import { ClippingProfileService } from './clipping-profile.service.js';
import { simulatedPublisher, type Publisher } from './publisher.js';
import { ScheduleService } from './schedule.service.js';
import type { SyndicationTables } from './syndication.tables.js';
import type { AddressCheck } from './target-probe.js';
import type { SecretSealer } from './target-secrets.js';
import { TargetService } from './target.service.js';

/** The syndication module's services, created once per runtime. */
export interface SyndicationModule {
  targets: TargetService;
  schedules: ScheduleService;
  clippingProfiles: ClippingProfileService;
  regions: readonly string[];
}

export interface SyndicationModuleDeps {
  db: Db;
  box: SecretSealer;
  clock: Clock;
  ids: IdGenerator;
  config: Config;
  publisher?: Publisher;
  /** Replaces the SSRF guard of the target test (tests). */
  checkAddress?: AddressCheck;
  /** Extra trust roots for the rtmps/https target test (tests). */
  probeCa?: string;
}

/**
 * The target test connects only where the SSRF guard lets callbacks go: public addresses,
 * plus what PLAYLINE_CALLBACK_ALLOWLIST admits; the connection is pinned to the checked address.
 */
export function ssrfAddressCheck(guard: SsrfGuard): AddressCheck {
  return async (host, port) => {
    const verdict = await guard.check(`http://${host.includes(':') ? `[${host}]` : host}:${port}/`);
    return verdict.ok ? { ok: true, address: verdict.address, family: verdict.family } : { ok: false, detail: verdict.detail };
  };
}

export function createSyndicationModule(deps: SyndicationModuleDeps): SyndicationModule {
  const db = deps.db.withTables<SyndicationTables>();
  const { clock, ids, config } = deps;
  const guard = new SsrfGuard({ allowList: parseCallbackAllowList(config.callbackAllowlist), clock });
  const checkAddress = deps.checkAddress ?? ssrfAddressCheck(guard);
  const targets = new TargetService({
    db,
    box: deps.box,
    clock,
    ids,
    probe: { checkAddress, timeoutMs: 5000, ...(deps.probeCa ? { ca: deps.probeCa } : {}) },
  });
  const regions = listSetting(config.regions);
  const pullHost = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const schedules = new ScheduleService({
    db,
    clock,
    ids,
    targets,
    publisher: deps.publisher ?? simulatedPublisher,
    regions,
    pullBaseUrl: `http://${pullHost.includes(':') ? `[${pullHost}]` : pullHost}:${config.port}`,
  });
  return { targets, schedules, clippingProfiles: new ClippingProfileService({ db, clock, ids }), regions };
}
