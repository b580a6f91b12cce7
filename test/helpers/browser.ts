import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';

/**
 * What the browser tests share: Debian's Chromium (Playwright's own download fails here) with the
 * flags this machine needs, the skip rule (skip without the tools unless PLAYLINE_REQUIRE_SERVICES=1,
 * where the test fails instead), where screenshots go, a page with stock hls.js on its own origin,
 * and a loopback callback receiver.
 */
export const CHROMIUM = process.env.PLAYLINE_CHROMIUM ?? '/usr/bin/chromium';

/** Headless Chromium as root on a machine without a network beyond loopback. */
export const chromiumArgs = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** Headless Chromium with a profile of its own in `profile`, at a desktop size (the dashboard tests). */
export const desktopBrowser = (profile: string): Promise<BrowserContext> =>
  chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: chromiumArgs, viewport: { width: 1280, height: 900 } });

/** Players start without a click. */
export const playerArgs = [...chromiumArgs, '--autoplay-policy=no-user-gesture-required'];

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Screenshots the tests take (git-ignored), created on first use. */
export const artifactsDir = (): string => {
  const dir = join(root, 'test-artifacts');
  mkdirSync(dir, { recursive: true });
  return dir;
};

/** A `describe` skip value: false, or why the test cannot run here (Chromium, and `tools` such as '/usr/bin/ffmpeg'). */
export function browserSkip(tools: readonly string[] = []): string | false {
  const missing = [CHROMIUM, ...tools].filter((path) => !existsSync(path));
  if (missing.length === 0 || process.env.PLAYLINE_REQUIRE_SERVICES === '1') return false;
  return `not found: ${missing.join(', ')} (apt-get install chromium${tools.length > 0 ? ' ffmpeg' : ''}, or set PLAYLINE_CHROMIUM)`;
}

/** The tools a required run lacks (PLAYLINE_REQUIRE_SERVICES=1 fails on these instead of skipping). */
export const missingTools = (tools: readonly string[] = []): string[] => [CHROMIUM, ...tools].filter((path) => !existsSync(path));

export interface PlayerSiteOptions {
  /** hls.js settings every `play` starts from (e.g. `{ cmcd: {} }`). */
  hlsConfig?: Record<string, unknown>;
  /** `video.playbackRate` once the manifest is parsed (VOD tests play at 2 to save time). */
  playbackRate?: number;
}

/**
 * A page on its own origin with stock hls.js: `window.play(url, config?)` plays a URL in
 * `#video`; `window.errors` collects hls.js errors (`fatal`, `details`, HTTP `status`); `window.hls`
 * is the player.
 */
export async function hlsPlayerSite(options: PlayerSiteOptions = {}): Promise<{ url: string; server: Server }> {
  const hlsJs = readFileSync(join(root, 'node_modules/hls.js/dist/hls.min.js'));
  const page = `<!doctype html><meta charset="utf-8"><video id="video" muted playsinline></video>
<script src="/hls.min.js"></script>
<script>
window.errors = [];
window.play = (url, config) => {
  const video = document.getElementById('video');
  const hls = new Hls(Object.assign(${JSON.stringify(options.hlsConfig ?? {})}, config || {}));
  hls.on(Hls.Events.ERROR, (_e, data) => window.errors.push({ fatal: data.fatal, details: data.details, status: data.response && data.response.code }));
  hls.on(Hls.Events.MANIFEST_PARSED, () => { video.playbackRate = ${options.playbackRate ?? 1}; video.play(); });
  hls.loadSource(url);
  hls.attachMedia(video);
  window.hls = hls;
};
</script>`;
  const server = createServer((request, response) => {
    if (request.url === '/hls.min.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(hlsJs);
    else response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, server };
}

export interface CallbackReceiver {
  url: string;
  /** Every body received, in order. */
  bodies: string[];
  /** What the next requests are answered (200 by default). */
  answer(status: number): void;
  server: Server;
}

/** A loopback callback receiver (`/hook`) answering `status` until told otherwise; it keeps every body. */
export async function callbackReceiver(status = 200): Promise<CallbackReceiver> {
  const bodies: string[] = [];
  let answer = status;
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      bodies.push(body);
      response.writeHead(answer, { 'content-type': 'text/plain' }).end(answer === 200 ? 'ok' : 'receiver says no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}/hook`, bodies, answer: (s) => (answer = s), server };
}
