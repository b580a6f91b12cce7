import { buildApp } from '../../src/app.js';
import { PlaylineClient, injectTransport } from '../../src/client/index.js';
import { FakeClock, type Clock } from '../../src/platform/clock.js';
import { loadConfig, type Config } from '../../src/platform/config.js';
import type { App } from '../../src/platform/http/types.js';
import { sequentialIds, type IdGenerator } from '../../src/platform/ids.js';
import { createRuntime, type Runtime, type RuntimeOverrides } from '../../src/runtime.js';
import type { DestinationStream } from 'pino';
import type { KeyKind } from '../../src/platform/auth/signing-key.js';
import type { CreatedApiKey, Workspace } from '../../src/modules/workspaces/workspaces.service.js';
import { openSqliteForTest, type TestStorage } from './engines.js';

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestApp {
  app: App;
  runtime: Runtime;
  clock: Clock;
  /** A workspace with one API key, and a client signed with it (over app.inject). */
  workspace: Workspace;
  key: CreatedApiKey;
  client: PlaylineClient;
  /** Another workspace and its client, for security tests. */
  other: { workspace: Workspace; key: CreatedApiKey; client: PlaylineClient };
  /** A client for any workspace/key pair. */
  clientFor(owner: string, apiKey: string): PlaylineClient;
  newKey(owner: string, kind?: KeyKind): Promise<CreatedApiKey>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Storage to use (see testEngines()); default: a fresh SQLite in a temp dir. */
  storage?: TestStorage;
  /** Defaults to a FakeClock at 2026-11-21T10:00:00Z. */
  clock?: Clock;
  ids?: IdGenerator;
  /** Environment-style settings (PLAYLINE_*), e.g. { PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' }. */
  env?: Record<string, string>;
  /** Replaces side effects of modules (fake publishers, provisioners, resolvers...). */
  overrides?: Omit<RuntimeOverrides, 'clock' | 'ids' | 'storage'>;
  /** Where the runtime's log lines go (give `env.PLAYLINE_LOG_LEVEL` too: the default level is silent). */
  logDestination?: DestinationStream;
  /** Call runtime.start() (background work) before returning. Default true. */
  start?: boolean;
}

/**
 * A built app over a real database with a signed client, torn down by `close()`.
 * Usage: `const t = await createTestApp(); after(() => t.close());`
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const storage = options.storage ?? (await openSqliteForTest());
  const clock = options.clock ?? new FakeClock();
  const config: Config = loadConfig({
    PLAYLINE_DATA_DIR: storage.dataDir,
    PLAYLINE_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    PLAYLINE_LOG_LEVEL: 'silent',
    PLAYLINE_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    // Slicers are simulated unless a test asks for ffmpeg ones.
    PLAYLINE_SLICER_PROVISIONER: 'simulated',
    // Route tests start schedules on content that is not live; the real publisher is opted into.
    PLAYLINE_PUBLISHER: 'simulated',
    ...(storage.databaseUrl ? { PLAYLINE_DATABASE_URL: storage.databaseUrl } : {}),
    ...options.env,
  });
  const runtime = await createRuntime(config, {
    ...options.overrides,
    clock,
    ids: options.ids ?? sequentialIds(),
    storage: storage.storage,
    ...(options.logDestination ? { logDestination: options.logDestination } : {}),
  });
  if (options.start ?? true) await runtime.start();
  const app = await buildApp(runtime);
  const clientFor = (owner: string, apiKey: string) =>
    new PlaylineClient({ transport: injectTransport(app), owner, apiKey, now: () => clock.now() });
  const workspace = await runtime.workspaces.createWorkspace('Test workspace');
  const key = await runtime.workspaces.createKey(workspace.id, { label: 'test' });
  const otherWorkspace = await runtime.workspaces.createWorkspace('Other workspace');
  const otherKey = await runtime.workspaces.createKey(otherWorkspace.id);
  return {
    app,
    runtime,
    clock,
    workspace,
    key,
    client: clientFor(workspace.id, key.secret),
    other: { workspace: otherWorkspace, key: otherKey, client: clientFor(otherWorkspace.id, otherKey.secret) },
    clientFor,
    async newKey(owner, kind = 'api') {
      const created = await runtime.workspaces.createKey(owner, { kind });
      runtime.keyRing.invalidate(owner);
      return created;
    },
    async close() {
      await app.close();
      await runtime.close();
      await storage.cleanup();
    },
  };
}
