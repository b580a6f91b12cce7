import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Debian's nginx (nginx-light): the front of deploy/nginx/playline.conf and the media benchmark's baseline. */
export const NGINX = process.env.PLAYLINE_NGINX ?? '/usr/sbin/nginx';

/** The shipped front configuration (deploy/README.md, compose.yaml). */
export const FRONT_CONF = new URL('../../deploy/nginx/playline.conf', import.meta.url);

/**
 * Why nginx tests cannot run here, or false. Like ffmpeg and Chromium: a visible skip on a
 * developer machine, a failure under PLAYLINE_REQUIRE_SERVICES=1 (CI: apt-get install nginx-light).
 */
export function nginxSkip(): string | false {
  if (existsSync(NGINX)) return false;
  const reason = `${NGINX} is not installed (Debian: apt-get install nginx-light)`;
  if (process.env.PLAYLINE_REQUIRE_SERVICES === '1') throw new Error(`${reason} (PLAYLINE_REQUIRE_SERVICES=1)`);
  console.log(`# SKIP nginx tests: ${reason}`);
  return reason;
}

/** A free loopback port (nginx cannot listen on port 0 and tell which it got). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface RunningNginx {
  url: string;
  port: number;
  /** The master process (CPU time is read from /proc/<pid>). */
  child: ChildProcess;
  /** What nginx wrote to its error log so far. */
  errors(): string;
  stop(): Promise<void>;
}

/**
 * nginx as a non-daemon child with its own prefix and configuration in a temp dir (no root, no
 * system path: temp files, pid and error log under it), on a free loopback port. `server` is the
 * text of one `server { ... }` block (and any `upstream` it names), whose `listen` line must be
 * `listen PORT;`: it is given the port. `workers` (default 1) sets worker_processes.
 */
export async function startNginx(server: (port: number) => string, options: { workers?: number } = {}): Promise<RunningNginx> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const prefix = mkdtempSync(join(tmpdir(), 'playline-nginx-'));
    for (const dir of ['logs', 'tmp']) mkdirSync(join(prefix, dir));
    const conf = join(prefix, 'nginx.conf');
    writeFileSync(
      conf,
      [
        'daemon off;',
        // As root, nginx's workers would become nobody, who cannot read the 0700 temp dirs tests make.
        ...(process.getuid?.() === 0 ? ['user root;'] : []),
        `worker_processes ${options.workers ?? 1};`,
        `pid ${join(prefix, 'nginx.pid')};`,
        `error_log ${join(prefix, 'logs', 'error.log')} warn;`,
        'events { worker_connections 4096; }',
        'http {',
        '  access_log off;',
        '  keepalive_requests 1000000;',
        ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${join(prefix, 'tmp', kind)};`),
        server(port),
        '}',
      ].join('\n'),
    );
    const child = spawn(NGINX, ['-p', prefix, '-c', conf, '-e', join(prefix, 'logs', 'startup.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const errors = () => {
      const read = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8') : '');
      return `${stderr}${read(join(prefix, 'logs', 'startup.log'))}${read(join(prefix, 'logs', 'error.log'))}`;
    };
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGQUIT');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(prefix, { recursive: true, force: true });
    };
    // Ready once it answers; it exits at once on a bad configuration or a port taken meanwhile.
    const ready = await waitUntilListening(port, child);
    if (ready) return { url: `http://127.0.0.1:${port}`, port, child, errors, stop };
    const why = errors();
    await stop();
    if (attempt >= 3 || !/Address already in use/.test(why)) throw new Error(`nginx did not start: ${why}`);
  }
}

async function waitUntilListening(port: number, child: ChildProcess): Promise<boolean> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    if (child.exitCode !== null || child.signalCode !== null) return false;
    try {
      await fetch(`http://127.0.0.1:${port}/`, { method: 'HEAD' });
      return true;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  return false;
}

/**
 * The shipped front (deploy/nginx/playline.conf) rewritten for a local run: the lines marked
 * `# test:` get the upstream Playline port, the listen port and the media root.
 */
export function frontServerBlock(options: { upstreamPort: number; mediaRoot: string }): (port: number) => string {
  const text = readFileSync(FRONT_CONF, 'utf8');
  return (port) => {
    let upstreamSeen = false;
    return text
      .split('\n')
      .flatMap((line) => {
        if (line.includes('# test: upstream')) {
          if (upstreamSeen) return [];
          upstreamSeen = true;
          return [`    server 127.0.0.1:${options.upstreamPort};`];
        }
        if (line.includes('# test: listen')) return [`    listen 127.0.0.1:${port};`];
        if (line.includes('# test: media')) return [`        alias ${options.mediaRoot.replace(/\/?$/, '/')};`];
        return [line];
      })
      .join('\n');
  };
}
