import type { IncomingMessage } from 'node:http';
import closeWithGrace from 'close-with-grace';
import type { Config } from './platform/config.js';
import type { Logger } from './platform/logger.js';
import { buildApp } from './app.js';
import { createRuntime, type Runtime } from './runtime.js';
import type { App } from './platform/http/types.js';
import { signV4 } from './platform/auth/v4-signature.js';
import { API_REFERENCE_PATH, DASHBOARD_PATH, OPENAPI_PATH } from './platform/http/front-door.js';

export interface RunningServer {
  app: App;
  runtime: Runtime;
  url: string;
  /** Finishes in-flight requests, stops background work, closes storage. */
  close(): Promise<void>;
}

export interface ServerOptions {
  /** Where the human-facing banner goes (bootstrap key, address). */
  print?: (line: string) => void;
}

/**
 * On the very first start of an empty embedded database: one workspace and API key, printed
 * with a command that calls the API, so a new user is signed in within a minute.
 */
async function bootstrap(runtime: Runtime): Promise<{ owner: string; key: string } | null> {
  if (runtime.mode === 'cluster') return null;
  if ((await runtime.workspaces.countWorkspaces()) > 0) return null;
  const workspace = await runtime.workspaces.createWorkspace('Default workspace');
  const key = await runtime.workspaces.createKey(workspace.id, { label: 'bootstrap' });
  return { owner: workspace.id, key: key.secret };
}

const bootstrapBanner = (url: string, owner: string, key: string, nowMs: number): string[] => {
  const { msg, sig } = signV4(owner, key, Math.floor(nowMs / 1000));
  const signed = `${url}/api/v4/workspace?msg=${encodeURIComponent(msg)}&sig=${sig}`;
  return [
    '',
    'Playline created a workspace for you (first start of an empty database).',
    `  Workspace ID: ${owner}`,
    `  API key:      ${key}`,
    '  The key is shown only this once: keep it somewhere safe.',
    '',
    'Call the API now (the signature is valid for 5 minutes):',
    `  curl -s '${signed}'`,
    '',
    'Sign any request later with:',
    `  PLAYLINE_API_KEY='${key}' npx playline sign --owner ${owner} --base-url ${url} /api/v4/workspace`,
    'or sign the CLI in once (it asks for the key) and call the API from it:',
    `  npx playline login --base-url ${url} --owner ${owner}`,
    '  npx playline api GET /api/v4/workspace',
    '',
  ];
};

/** What a person opens first: the dashboard and the API reference. */
const whereToLook = (url: string): string[] => [
  `  Dashboard:      ${url}${DASHBOARD_PATH}`,
  `  API reference:  ${url}${API_REFERENCE_PATH}  (OpenAPI document: ${url}${OPENAPI_PATH})`,
];

export async function startServer(config: Config, options: ServerOptions = {}): Promise<RunningServer> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const runtime = await createRuntime(config, { processMetrics: true });
  let app: App | undefined;
  try {
    const created = await bootstrap(runtime);
    await runtime.start();
    app = await buildApp(runtime);
    const receiving = requestsReceivingBodies(app);
    const address = await app.listen({ port: config.port, host: config.host });
    const port = new URL(address).port;
    runtime.managedSlicers.listening(Number(port));
    const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
    const url = `http://${host}:${port}`;
    const lines = created ? bootstrapBanner(url, created.owner, created.key, runtime.clock.now()) : [];
    lines.push(...whereToLook(url));
    // The listening line comes last: scripts may wait for it and then read the banner.
    lines.push(`Playline listening on ${url} (storage: ${runtime.storage.engine}${runtime.mode === 'embedded' ? `, data dir ${config.dataDir}` : ''})`);
    print(lines.join('\n'));
    const running = app;
    return {
      app: running,
      runtime,
      url,
      async close() {
        const closed = running.close();
        // A request still sending its body (an upload may take minutes) would hold the close for
        // the whole grace and then exit 1 with the runtime (slicers' ffmpeg) never stopped: cut it
        // now (the upload's partial file is removed as for any cut upload); requests already
        // received finish as before.
        for (const req of receiving) if (!req.complete) req.socket.destroy();
        await closed;
        await runtime.close();
      },
    };
  } catch (err) {
    await app?.close().catch(() => undefined);
    await runtime.close().catch(() => undefined);
    throw err;
  }
}

/** The requests of `app` whose bodies are still arriving (kept up to date as they end). */
function requestsReceivingBodies(app: App): Set<IncomingMessage> {
  const receiving = new Set<IncomingMessage>();
  app.server.on('request', (req: IncomingMessage) => {
    if (req.complete) return;
    receiving.add(req);
    const forget = () => receiving.delete(req);
    req.once('end', forget);
    req.once('close', forget);
  });
  return receiving;
}

export interface ShutdownOptions {
  /** How long the graceful close may take before the process exits anyway (PLAYLINE_SHUTDOWN_GRACE_MS). */
  graceMs: number;
  log: Pick<Logger, 'info' | 'error'>;
}

/**
 * Stops gracefully on SIGTERM, SIGINT (and SIGHUP, SIGQUIT, SIGUSR2) or an uncaught error: exit
 * code 0 when the close finished, 1 after an error. A close still running after `graceMs` (a hung
 * connection or background task) is cut short with a log line and exit code 1; a second signal
 * exits at once. The fatal signals (SIGSEGV and the like) are left to Node: no JS may run then.
 */
export function closeOnSignals(server: Pick<RunningServer, 'close'>, options: ShutdownOptions): void {
  const { log, graceMs } = options;
  closeWithGrace(
    {
      delay: graceMs,
      skip: ['SIGILL', 'SIGTRAP', 'SIGABRT', 'SIGBUS', 'SIGFPE', 'SIGSEGV'],
      logger: { error: (err: unknown) => log.error({ err }, 'shutdown failed') },
      onTimeout: () => log.error({ graceMs }, `shutdown still running after ${graceMs} ms (PLAYLINE_SHUTDOWN_GRACE_MS): exiting with code 1`),
      onSecondSignal: (signal) => log.error({ signal }, 'second signal during shutdown: exiting with code 1'),
      onSecondError: (err) => log.error({ err }, 'error during shutdown: exiting with code 1'),
    },
    async ({ signal, err }) => {
      if (err) log.error({ err }, 'uncaught error: shutting down');
      else log.info({ signal }, 'shutting down: finishing in-flight requests');
      await server.close();
    },
  );
}
