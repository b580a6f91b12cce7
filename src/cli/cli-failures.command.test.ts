import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { playline } from '../../test/helpers/cli.js';
import { sharedPlaylineBin } from '../../test/helpers/built-package.js';
import { systemClock } from '../platform/clock.js';

describe('playline assets upload: a failed upload says what happened (issue 36)', () => {
  let t: TestApp;
  let url: string;
  let scratch: string;
  let file: string;
  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'playline-cli-failures-'));
    file = join(scratch, 'clip.mp4');
    writeFileSync(file, Buffer.alloc(4 * 1024 * 1024, 7));
    t = await createTestApp({ clock: systemClock, env: { PLAYLINE_MAX_UPLOAD_BYTES: String(64 * 1024) } });
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await t.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const env = () => ({ PLAYLINE_API_KEY: t.key.secret, XDG_CONFIG_HOME: scratch });

  test('an upload beyond the server\'s limit prints the server\'s problem (413 payload_too_large), exit 1', async () => {
    const out = await playline(['assets', 'upload', file, '--base-url', url, '--owner', t.workspace.id], env());
    assert.equal(out.status, 1, out.stderr);
    assert.match(out.stderr, /^playline: 413 payload_too_large: /m);
    assert.doesNotMatch(out.stderr, /fetch failed/);
  });

  test('a 20,000-character title prints what the server answered, not "fetch failed"', async () => {
    const out = await playline(['assets', 'upload', file, '--title', 'x'.repeat(20_000), '--base-url', url, '--owner', t.workspace.id], env());
    assert.equal(out.status, 1, out.stderr);
    assert.doesNotMatch(out.stderr, /^playline: fetch failed$/m);
    // The request line is past the server's header limit: its problem detail says so.
    assert.match(out.stderr, /^playline: 431 headers_too_large: The request line and headers are larger than this server accepts$/m);
    assert.doesNotMatch(out.stderr, /100%/, 'the bar stops where the server stopped reading');
  });
});

describe('playline assets upload against a server that cuts the connection (issue 36)', () => {
  let server: Server;
  let url: string;
  let scratch: string;
  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'playline-cli-cut-'));
    // Reads the first 256 KiB of the body, then closes the connection without an answer.
    server = createServer((req) => {
      let received = 0;
      req.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received >= 256 * 1024) req.socket.destroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(scratch, { recursive: true, force: true });
  });

  test('prints that the connection was closed after N bytes and the cause, exit 1, and does not draw 100 %', async () => {
    const file = join(scratch, 'big.mp4');
    writeFileSync(file, Buffer.alloc(8 * 1024 * 1024, 1));
    const out = await playline(['assets', 'upload', file, '--base-url', url, '--owner', 'ws', '--key', 'k'], { XDG_CONFIG_HOME: scratch });
    assert.equal(out.status, 1, out.stderr);
    assert.match(out.stderr, /^playline: the connection to 127\.0\.0\.1:\d+ was closed after \d+ bytes of the body were sent, before the server answered$/m);
    assert.match(out.stderr, /^ {2}cause: \S/m);
    assert.doesNotMatch(out.stderr, /100%/);
  });

  test('a missing file is named, not a raw ENOENT; nothing is sent', async () => {
    const missing = join(scratch, 'nope', 'movie.mp4');
    const out = await playline(['assets', 'upload', missing, '--base-url', url, '--owner', 'ws', '--key', 'k'], { XDG_CONFIG_HOME: scratch });
    assert.equal(out.status, 1);
    assert.equal(out.stderr, `playline: no such file: ${missing} (looked for ${missing})\n`);
  });
});

describe('playline assets upload: Ctrl-C (issue 36)', () => {
  let server: Server;
  let url: string;
  let scratch: string;
  let closedByClient: Promise<unknown>;
  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'playline-cli-int-'));
    // Takes the body slowly and never answers: the upload is in flight until the client stops it.
    let seen: () => void = () => undefined;
    closedByClient = new Promise<void>((resolve) => (seen = resolve));
    server = createServer((req) => {
      req.pause();
      const timer = setInterval(() => req.read(), 200);
      req.socket.once('close', () => {
        clearInterval(timer);
        seen();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(scratch, { recursive: true, force: true });
  });

  test('stops the upload at once: the connection is closed, exit code 130, a line says so', async () => {
    const file = join(scratch, 'big.mp4');
    writeFileSync(file, Buffer.alloc(64 * 1024 * 1024, 2));
    const child = spawn(process.execPath, [await sharedPlaylineBin(), 'assets', 'upload', file, '--base-url', url, '--owner', 'ws', '--key', 'k'], {
      env: { ...process.env, XDG_CONFIG_HOME: scratch },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    const uploading = new Promise<void>((resolve) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('uploading big.mp4')) resolve();
      });
    });
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    await uploading;
    child.kill('SIGINT');
    const [code, signal] = await exited;
    assert.deepEqual({ code, signal }, { code: 130, signal: null }, stderr);
    assert.match(stderr, /^playline: upload of big\.mp4 interrupted \(Ctrl-C\); the server keeps nothing of it$/m);
    await closedByClient;
  });
});
