import { hostname } from 'node:os';
import type { Registry } from 'prom-client';
import type { BackgroundWork } from '../../platform/background-work.js';
import type { Clock } from '../../platform/clock.js';
import type { Config, DeploymentMode } from '../../platform/config.js';
import type { Db } from '../../platform/db/database.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { RunnerLog } from '../../platform/leased-work.js';
import type { ModuleParts } from '../../platform/module-parts.js';
import { parseCallbackAllowList } from '../../platform/net/callback-allowlist.js';
import { SsrfGuard, type HostResolver } from '../../platform/net/ssrf-guard.js';
import type { SecretBox } from '../../platform/secret-box.js';
import { CallbackClient, type CallbackTransport } from '../error-reporting/callback-client.js';
import { EventIntake } from './event-intake.js';
import { WebhookDeliverer } from './webhook-deliverer.js';
import { registerWebhookMetrics } from './webhooks.metrics.js';
import { deleteWorkspaceRows } from './webhooks.repository.js';
import { webhookRoutes } from './webhooks.routes.js';
import { WebhookService } from './webhooks.service.js';

export interface WebhooksDeps {
  config: Pick<Config, 'outboundAllowlist' | 'webhookMaxSubscriptions' | 'webhookMaxPending' | 'webhookTimeoutMs' | 'webhookConcurrency' | 'webhookPollMs'>;
  mode: DeploymentMode;
  clock: Clock;
  ids: IdGenerator;
  storage: { db: Db };
  box: SecretBox;
  metrics: { registry: Registry };
  log: RunnerLog;
}

/** Test seams, kept apart from the production wiring above. */
export interface WebhooksOverrides {
  /** DNS for the outbound guard (tests answer from a table). */
  resolver?: HostResolver;
  /** Replaces the HTTP client (tests). */
  transport?: CallbackTransport;
}

/** Operational event webhooks: the sink producers emit to, the subscriptions API, the deliverer. */
export interface Webhooks {
  /** Where assets, slicers and publishing hand their events. */
  events: EventIntake;
  service: WebhookService;
  deliverer: WebhookDeliverer;
  parts: ModuleParts;
}

/** Builds the webhooks module. A bad allow-list entry was already refused by Error Reporting (same setting). */
export function createWebhooks(deps: WebhooksDeps, overrides: WebhooksOverrides = {}): Webhooks {
  const { config, clock, ids, box, log } = deps;
  const db = deps.storage.db;
  const metrics = registerWebhookMetrics(deps.metrics.registry);
  const guard = new SsrfGuard({ allowList: parseCallbackAllowList(config.outboundAllowlist), clock, ...(overrides.resolver ? { resolver: overrides.resolver } : {}) });
  // Its own client (pools, timeout): a slow webhook endpoint never holds up Error Reports, nor the reverse.
  const client = overrides.transport ? undefined : new CallbackClient({ guard, clock, timeoutMs: config.webhookTimeoutMs, connectionsPerEndpoint: 4 });
  const transport: CallbackTransport = overrides.transport ?? (client as CallbackClient);
  const deliverer = new WebhookDeliverer({
    db, box, clock, ids, transport, log, metrics,
    ownerId: `${hostname()}:${process.pid}:${ids.hex().slice(0, 8)}`,
    exclusive: deps.mode === 'embedded',
    concurrency: config.webhookConcurrency,
    // Well beyond one attempt (its timeout): a lease runs out only when its instance is gone.
    leaseMs: config.webhookTimeoutMs * 2 + 30_000,
    pollMs: config.webhookPollMs,
  });
  const events = new EventIntake({ db, clock, ids, metrics, log, maxPending: config.webhookMaxPending, stored: () => deliverer.notify() });
  const service = new WebhookService({
    db, box, clock, ids, transport, metrics,
    checkUrl: (url) => guard.check(url),
    maxSubscriptions: config.webhookMaxSubscriptions,
  });
  const work: BackgroundWork = {
    name: 'webhooks',
    start: () => deliverer.start(),
    async stop() {
      // The producers stopped first (reverse start order): their last events are stored, then sent later.
      await events.settled();
      // Closing the client ends the attempts in flight at once (they are made again after the restart).
      await deliverer.stop(async () => client?.close());
    },
  };
  return {
    events,
    service,
    deliverer,
    parts: {
      name: 'webhooks',
      apiRoutes: (api) => webhookRoutes(api, service),
      work: [work],
      workspaceData: [{ name: 'webhooks', deleteRows: deleteWorkspaceRows }],
    },
  };
}
