import { hostname } from 'node:os';
import type { Registry } from 'prom-client';
import type { BackgroundWork } from '../../platform/background-work.js';
import type { Clock } from '../../platform/clock.js';
import type { Config, DeploymentMode } from '../../platform/config.js';
import type { Db } from '../../platform/db/database.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { RunnerLog } from '../../platform/leased-work.js';
import type { ModuleParts } from '../../platform/module-parts.js';
import type { Outbound } from '../../platform/net/outbound.js';
import type { SecretBox } from '../../platform/secret-box.js';
import { CallbackClient, type CallbackTransport } from '../../platform/outbound/delivery-client.js';
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
  /** The one way out of the process (platform/net/outbound.ts): the guard and DNS pinning are inside. */
  outbound: Outbound;
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

/** Builds the webhooks module: the retried delivery policy over the shared delivery client (platform/outbound). */
export function createWebhooks(deps: WebhooksDeps): Webhooks {
  const { config, clock, ids, box, log } = deps;
  const db = deps.storage.db;
  const metrics = registerWebhookMetrics(deps.metrics.registry);
  // Its own client (pools, timeout): a slow webhook endpoint never holds up Error Reports, nor the reverse.
  const client = deps.transport ? undefined : new CallbackClient({ outbound: deps.outbound, clock, timeoutMs: config.webhookTimeoutMs, connectionsPerEndpoint: 4 });
  const transport: CallbackTransport = deps.transport ?? (client as CallbackClient);
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
    outbound: deps.outbound,
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
