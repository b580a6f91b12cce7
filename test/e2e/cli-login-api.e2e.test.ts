import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { playline } from '../helpers/cli.js';
import { bootstrapCredentials, startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { writeFakeAsset } from '../../src/modules/playback-edge/testing/media-fixtures.js';

describe('playline login, api, and the profile other client commands use', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-login-e2e-'));
  const configHome = mkdtempSync(join(tmpdir(), 'playline-xdg-'));
  // No key or URL from the test's own environment: only the flags and the profile count.
  const env = { XDG_CONFIG_HOME: configHome, PLAYLINE_API_KEY: undefined, PLAYLINE_BASE_URL: undefined, PLAYLINE_PROFILE: undefined };
  let server: ServerProcess;
  let owner: string;
  let key: string;
  before(async () => {
    server = await startServerProcess({ PLAYLINE_DATA_DIR: dataDir });
    ({ owner, key } = bootstrapCredentials(server));
  });
  after(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(configHome, { recursive: true, force: true });
  });

  test('a wrong key is refused and nothing is saved', async () => {
    const result = await playline(['login', '--base-url', server.url, '--owner', owner], env, { input: 'not-the-key\n' });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /refused the workspace id and key: HTTP 401/);
    assert.throws(() => statSync(join(configHome, 'playline', 'config.json')));
  });

  test('login checks the key (read from stdin), saves a 0600 profile and never prints the key', async () => {
    const result = await playline(['login', '--base-url', server.url, '--owner', owner], env, { input: `${key}\n` });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`Signed in to ${server.url} as workspace ${owner} \\(Default workspace\\); profile "default" saved`));
    assert.equal(`${result.stdout}${result.stderr}`.includes(key), false, 'the key is never echoed');
    const file = join(configHome, 'playline', 'config.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(join(configHome, 'playline')).mode & 0o777, 0o700);
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { profiles: { default: { base_url: server.url, owner, key } } });
  });

  test('api signs with the profile: body on stdout; a non-2xx status on stderr with exit code 1', async () => {
    // Independent calls side by side; the list after the create.
    const [workspace, created, missing, invalid] = await Promise.all([
      playline(['api', 'GET', '/api/v4/workspace'], env),
      playline(['api', 'POST', '/api/v4/syndication-target', '--data', '{"platform":"Twitch","target_protocol":"rtmp","target_stream":"live_1"}'], env),
      playline(['api', 'GET', '/api/v4/syndication-target/00000000000000000000000000000000'], env),
      playline(['api', 'POST', '/api/v4/syndication-target', '--data', '{"platform":'], env),
    ]);
    assert.equal(workspace.status, 0, workspace.stderr);
    assert.equal((JSON.parse(workspace.stdout) as { id: string }).id, owner);
    assert.equal(workspace.stderr, '');

    assert.equal(created.status, 0, created.stderr);
    const target = JSON.parse(created.stdout) as { id: string; target_stream: string };
    assert.equal(target.target_stream, '********');
    const listed = JSON.parse((await playline(['api', 'get', '/api/v4/syndication-target'], env)).stdout) as { items: { id: string }[] };
    assert.deepEqual(listed.items.map((t) => t.id), [target.id]);

    assert.equal(missing.status, 1);
    assert.equal(missing.stderr, 'HTTP 404 Not Found\n');
    assert.equal((JSON.parse(missing.stdout) as { code: string }).code, 'not_found');

    assert.equal(invalid.status, 1);
    assert.match(invalid.stderr, /--data is not valid JSON/);
  });

  test('keys --via-api: create (secret once), list and revoke through the signed API as the profile\'s workspace', async () => {
    const created = await playline(['keys', 'create', '--via-api', '--label', 'from the cli', '--json'], env);
    assert.equal(created.status, 0, created.stderr);
    const key2 = JSON.parse(created.stdout) as { id: string; owner: string; secret: string; label: string };
    assert.deepEqual([key2.owner, key2.label], [owner, 'from the cli']);
    assert.ok(key2.secret.length >= 32);
    const listed = JSON.parse((await playline(['keys', 'list', '--via-api', '--json'], env)).stdout) as { id: string; secret?: string; revoked_at: string | null }[];
    assert.ok(listed.some((k) => k.id === key2.id && k.revoked_at === null));
    assert.ok(listed.every((k) => k.secret === undefined), 'a list never shows secrets');
    const revoked = await playline(['keys', 'revoke', key2.id, '--via-api', '--json'], env);
    assert.equal(revoked.status, 0, revoked.stderr);
    assert.notEqual((JSON.parse(revoked.stdout) as { revoked_at: string | null }).revoked_at, null);
    // Revoking the key that signs is refused (the workspace would lock itself out of this profile).
    const self = (JSON.parse((await playline(['keys', 'list', '--via-api', '--json'], env)).stdout) as { id: string; prefix: string }[]).find((k) => key.startsWith(k.prefix));
    const refused = await playline(['keys', 'revoke', String(self?.id), '--via-api'], env);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /signed with the key it would revoke/);
  });

  test('sign and sign-playback take owner, key and base URL from the profile', async () => {
    const [signed, playback] = await Promise.all([playline(['sign', '/api/v4/workspace'], env), playline(['sign-playback', 'movie-1', '--json'], env)]);
    assert.equal(signed.status, 0, signed.stderr);
    const curl = signed.stdout.trim();
    assert.ok(curl.startsWith(`curl -sS '${server.url}/api/v4/workspace?msg=`), curl);
    const answer = JSON.parse(execFileSync('sh', ['-c', curl], { encoding: 'utf8' })) as { id: string };
    assert.equal(answer.id, owner);

    assert.equal(playback.status, 0, playback.stderr);
    const { url } = JSON.parse(playback.stdout) as { url: string };
    assert.ok(url.startsWith(`${server.url}/play/movie-1.m3u8?`) && url.includes(`oid=${owner}`), url);
    // A packaged asset of the workspace's library (written in place, as the asset library leaves it).
    await writeFakeAsset(join(dataDir, 'media'), owner, 'movie-1');
    assert.equal((await fetch(url)).status, 200);
  });

  test('named profiles; flags win over the profile; an unknown named profile is an error', async () => {
    assert.equal((await playline(['login', '--base-url', server.url, '--owner', owner, '--profile', 'staging'], env, { input: `${key}\n` })).status, 0);
    const [viaNamed, wrongKey, unknown] = await Promise.all([
      playline(['api', 'GET', '/api/v4/workspace', '--profile', 'staging'], env),
      playline(['api', 'GET', '/api/v4/workspace', '--key', 'wrong'], env),
      playline(['api', 'GET', '/api/v4/workspace', '--profile', 'nope'], env),
    ]);
    assert.equal(viaNamed.status, 0, viaNamed.stderr);
    assert.equal(wrongKey.status, 1);
    assert.equal(wrongKey.stderr, 'HTTP 401 Unauthorized\n');
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /no profile "nope" in .*: run playline login --profile nope/);
    const out = await playline(['logout', '--profile', 'staging'], env);
    assert.match(out.stdout, /Profile "staging" removed/);
  });
});
