import type { PlaylineClient } from '../../client/index.js';
import { FakeClock } from '../../platform/clock.js';
import type { App } from '../../platform/http/types.js';
import { createTestApp, type TestApp } from '../../../test/helpers/test-app.js';
import type { SyndicationModule, SyndicationModuleDeps } from './syndication.module.js';
import type { SyndicationApi } from '../../client/syndication.js';

/** A test app (the real buildApp) with the publishing API; its log lines are captured in `logs`. */
export interface SyndicationTestApp {
  t: TestApp;
  app: App;
  module: SyndicationModule;
  clock: FakeClock;
  api: SyndicationApi;
  otherApi: SyndicationApi;
  /** The raw signed client (for bodies the SDK types would refuse). */
  client: PlaylineClient;
  logs: string[];
  close(): Promise<void>;
}

export interface SyndicationTestOptions {
  env?: Record<string, string>;
  /** Replaces the module's side effects (publisher, extra trust roots). */
  module?: Partial<Pick<SyndicationModuleDeps, 'publisher' | 'probeCa'>>;
}

export async function createSyndicationTestApp(options: SyndicationTestOptions = {}): Promise<SyndicationTestApp> {
  const clock = new FakeClock();
  const logs: string[] = [];
  const t = await createTestApp({
    clock,
    logDestination: { write: (line: string) => void logs.push(line) },
    env: { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32', PLAYLINE_LOG_LEVEL: 'debug', ...options.env },
    ...(options.module ? { overrides: { syndication: options.module } } : {}),
  });
  return {
    t,
    app: t.app,
    module: t.runtime.syndication,
    clock,
    api: t.client.syndication,
    otherApi: t.other.client.syndication,
    client: t.client,
    logs,
    close: () => t.close(),
  };
}
