import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig, mediaMemoryLimitBytesOf, packagingLadderOf, settings, trustedProxiesOf } from './config.js';
import { MAX_RENDITIONS } from './media/packaged-manifest.js';

test('defaults apply when nothing is set', () => {
  const config = loadConfig({});
  assert.equal(config.port, 8080);
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.timestampToleranceS, 300);
  assert.equal(config.databaseUrl, undefined);
});

test('environment values are converted and flags override them', () => {
  const config = loadConfig({ PLAYLINE_PORT: '9000', PLAYLINE_LOG_LEVEL: 'warn' }, { port: '9100' });
  assert.equal(config.port, 9100);
  assert.equal(config.logLevel, 'warn');
});

test('a bad value names the setting, its variable and its flag', () => {
  assert.throws(() => loadConfig({ PLAYLINE_PORT: 'abc' }), (err: unknown) => {
    assert.ok(err instanceof ConfigError);
    assert.match(err.message, /PLAYLINE_PORT \(--port\)/);
    assert.match(err.message, /"abc"/);
    return true;
  });
  assert.throws(() => loadConfig({ PLAYLINE_DATABASE_URL: 'mysql://x' }), /PLAYLINE_DATABASE_URL/);
  assert.throws(() => loadConfig({ PLAYLINE_LOG_LEVEL: 'loud' }), /PLAYLINE_LOG_LEVEL/);
});

test('secret settings are never echoed in errors', () => {
  assert.throws(() => loadConfig({ PLAYLINE_ADMIN_TOKEN: 'short-secret' }), (err: unknown) => {
    assert.ok(err instanceof Error);
    assert.doesNotMatch(err.message, /short-secret/);
    assert.match(err.message, /PLAYLINE_ADMIN_TOKEN/);
    return true;
  });
});

test('every setting has a variable, a flag and a description', () => {
  for (const s of settings) {
    assert.match(s.env, /^PLAYLINE_[A-Z0-9_]+$/);
    assert.match(s.flag, /^--[a-z][a-z0-9-]*$/);
    assert.ok(s.description.length > 10);
  }
});

test('the outbound allow-list covers callbacks and publishing; its former name is still read and joins it', () => {
  assert.equal(loadConfig({ PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32' }).outboundAllowlist, '127.0.0.1/32');
  const former = loadConfig({ PLAYLINE_CALLBACK_ALLOWLIST: '10.0.0.0/8' });
  assert.equal(former.outboundAllowlist, '10.0.0.0/8');
  assert.equal(former.callbackAllowlist, '10.0.0.0/8', 'kept, so the start can warn that it is deprecated');
  assert.equal(loadConfig({ PLAYLINE_OUTBOUND_ALLOWLIST: '127.0.0.1/32', PLAYLINE_CALLBACK_ALLOWLIST: '10.0.0.0/8' }).outboundAllowlist, '127.0.0.1/32,10.0.0.0/8');
});

test('a packaging ladder that could package an asset the playback edge refuses is refused, naming PLAYLINE_PACKAGING_LADDER', () => {
  const ladder = (n: number) => Array.from({ length: n }, (_, i) => `${1000 + i}p`).join(',');
  const refused = (env: Record<string, string>, flags = {}, problem: RegExp) =>
    assert.throws(() => loadConfig(env, flags), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /^Invalid setting PLAYLINE_PACKAGING_LADDER \(--packaging-ladder\): /);
      assert.match(err.message, problem);
      return true;
    });
  refused({ PLAYLINE_PACKAGING_LADDER: ladder(MAX_RENDITIONS + 1) }, {}, /17 rungs, but a packaged asset holds at most 16 renditions/);
  refused({}, { packagingLadder: ladder(MAX_RENDITIONS + 1) }, /17 rungs/);
  refused({ PLAYLINE_PACKAGING_LADDER: '720p,360p,720p' }, {}, /720p is named twice/);
  refused({ PLAYLINE_PACKAGING_LADDER: '720p,0720p' }, {}, /720p is named twice/);
  refused({ PLAYLINE_PACKAGING_LADDER: '000p' }, {}, /000p is not a picture height/);
  assert.deepEqual(packagingLadderOf(loadConfig({ PLAYLINE_PACKAGING_LADDER: ladder(MAX_RENDITIONS) })).length, MAX_RENDITIONS);
  assert.deepEqual(packagingLadderOf(loadConfig({ PLAYLINE_PACKAGING_LADDER: ' 360p, 1080p,720p' })), [1080, 720, 360], 'highest first');
  assert.deepEqual(packagingLadderOf(loadConfig({})), [1080, 720, 360]);
});

test('connection caps: per client network (/24 and /64 by default) and per instance (unset: from the open-file limit)', () => {
  const defaults = loadConfig({});
  assert.deepEqual(
    [defaults.maxConnectionsPerAddress, defaults.connectionPrefixIpv4, defaults.connectionPrefixIpv6, defaults.maxConnections, defaults.fdReserve],
    [256, 24, 64, undefined, 512],
  );
  const set = loadConfig({ PLAYLINE_CONNECTION_PREFIX_IPV4: '32', PLAYLINE_CONNECTION_PREFIX_IPV6: '128', PLAYLINE_MAX_CONNECTIONS: '5000', PLAYLINE_FD_RESERVE: '100' });
  assert.deepEqual([set.connectionPrefixIpv4, set.connectionPrefixIpv6, set.maxConnections, set.fdReserve], [32, 128, 5000, 100]);
  assert.throws(() => loadConfig({ PLAYLINE_CONNECTION_PREFIX_IPV4: '33' }), /PLAYLINE_CONNECTION_PREFIX_IPV4 \(--connection-prefix-ipv4\)/);
  assert.throws(() => loadConfig({ PLAYLINE_CONNECTION_PREFIX_IPV6: '129' }), /PLAYLINE_CONNECTION_PREFIX_IPV6/);
  assert.throws(() => loadConfig({ PLAYLINE_MAX_CONNECTIONS: '0' }), /PLAYLINE_MAX_CONNECTIONS \(--max-connections\)/);
  assert.throws(() => loadConfig({ PLAYLINE_FD_RESERVE: '-1' }), /PLAYLINE_FD_RESERVE/);
});

test('packaging budgets, the stream cap and the media memory limit have defaults, are converted and are checked', () => {
  const defaults = loadConfig({});
  assert.equal(defaults.packagingMaxDurationS, 14400);
  assert.equal(defaults.packagingMaxFrames, 864000);
  assert.equal(defaults.packagingMaxOutputBytes, 32 * 1024 ** 3);
  assert.equal(defaults.packagingTimeFactor, 8);
  assert.equal(defaults.packagingMinTimeS, 120);
  assert.equal(defaults.packagingMaxGapS, 60);
  assert.equal(defaults.mediaMaxStreams, 8);
  assert.equal(defaults.mediaMemoryLimitMb, undefined);
  assert.equal(mediaMemoryLimitBytesOf(defaults, 2), 2560 * 1024 * 1024, 'unset: 2048 MiB + 256 MiB per core');
  assert.equal(mediaMemoryLimitBytesOf(defaults, 16), 6144 * 1024 * 1024);
  const set = loadConfig({ PLAYLINE_PACKAGING_MAX_DURATION_S: '600', PLAYLINE_PACKAGING_TIME_FACTOR: '1.5', PLAYLINE_MEDIA_MAX_STREAMS: '3', PLAYLINE_MEDIA_MEMORY_LIMIT_MB: '512' });
  assert.equal(set.packagingMaxDurationS, 600);
  assert.equal(set.packagingTimeFactor, 1.5);
  assert.equal(set.mediaMaxStreams, 3);
  assert.equal(mediaMemoryLimitBytesOf(set), 512 * 1024 * 1024);
  assert.equal(mediaMemoryLimitBytesOf(loadConfig({ PLAYLINE_MEDIA_MEMORY_LIMIT_MB: '0' })), 0, '0 turns the limit off');
  assert.throws(() => loadConfig({ PLAYLINE_PACKAGING_MAX_DURATION_S: '0' }), /PLAYLINE_PACKAGING_MAX_DURATION_S \(--packaging-max-duration-s\)/);
  assert.throws(() => loadConfig({ PLAYLINE_PACKAGING_TIME_FACTOR: 'fast' }), /PLAYLINE_PACKAGING_TIME_FACTOR/);
  assert.throws(() => loadConfig({ PLAYLINE_MEDIA_MAX_STREAMS: '0' }), /PLAYLINE_MEDIA_MAX_STREAMS/);
  assert.throws(() => loadConfig({ PLAYLINE_MEDIA_MEMORY_LIMIT_MB: '-1' }), /PLAYLINE_MEDIA_MEMORY_LIMIT_MB/);
  assert.throws(() => loadConfig({ PLAYLINE_PACKAGING_MAX_OUTPUT_BYTES: '1000' }), /PLAYLINE_PACKAGING_MAX_OUTPUT_BYTES/);
  assert.equal(loadConfig({ PLAYLINE_PACKAGING_MAX_GAP_S: '0' }).packagingMaxGapS, 0, '0 turns the gap check off');
  assert.equal(loadConfig({ PLAYLINE_PACKAGING_MAX_GAP_S: '300' }).packagingMaxGapS, 300);
  assert.throws(() => loadConfig({ PLAYLINE_PACKAGING_MAX_GAP_S: '-1' }), /PLAYLINE_PACKAGING_MAX_GAP_S \(--packaging-max-gap-s\)/);
  assert.throws(() => loadConfig({ PLAYLINE_PACKAGING_MAX_GAP_S: 'a minute' }), /PLAYLINE_PACKAGING_MAX_GAP_S/);
});

test('workspace quotas: defaults keep one workspace\'s slicers below the deployment cap; values are converted; bad ones name their setting', () => {
  const config = loadConfig({});
  assert.equal(config.quotaSlicers, 16);
  assert.equal(config.maxSlicers, 64);
  assert.ok(config.quotaSlicers < config.maxSlicers, 'a 17th slicer of one workspace is refused by its quota while others can still create');
  assert.equal(config.quotaStorageBytes, 100 * 1024 ** 3);
  assert.equal(config.quotaAssets, 10000);
  assert.equal(config.quotaTargets, 100);
  assert.equal(config.quotaSchedules, 200);
  assert.equal(config.quotaActivePushes, 8);
  assert.equal(config.hlsPushMaxFiles, 200);
  assert.equal(config.hlsPushMaxFolderBytes, 512 * 1024 ** 2);

  const set = loadConfig({ PLAYLINE_QUOTA_STORAGE_BYTES: '2097152', PLAYLINE_QUOTA_ACTIVE_PUSHES: '3' }, { quotaTargets: '5' });
  assert.deepEqual([set.quotaStorageBytes, set.quotaActivePushes, set.quotaTargets], [2097152, 3, 5]);

  for (const [env, value] of [
    ['PLAYLINE_QUOTA_STORAGE_BYTES', '1000'],
    ['PLAYLINE_QUOTA_ASSETS', '0'],
    ['PLAYLINE_QUOTA_SLICERS', '-1'],
    ['PLAYLINE_QUOTA_TARGETS', 'many'],
    ['PLAYLINE_QUOTA_SCHEDULES', '0'],
    ['PLAYLINE_QUOTA_ACTIVE_PUSHES', '0'],
    ['PLAYLINE_HLS_PUSH_MAX_FILES', '1'],
    ['PLAYLINE_HLS_PUSH_MAX_FOLDER_BYTES', '1024'],
  ] as const) {
    assert.throws(() => loadConfig({ [env]: value }), (err: unknown) => err instanceof ConfigError && err.message.includes(`Invalid setting ${env} (`) && err.message.includes(value), env);
  }
});

test('webhook settings: defaults, values read, out-of-range values refused naming the setting', () => {
  const defaults = loadConfig({});
  assert.deepEqual(
    [defaults.webhookMaxSubscriptions, defaults.webhookMaxPending, defaults.webhookTimeoutMs, defaults.webhookConcurrency, defaults.webhookPollMs],
    [20, 1000, 15000, 8, 5000],
  );
  const set = loadConfig({ PLAYLINE_WEBHOOK_MAX_SUBSCRIPTIONS: '3', PLAYLINE_WEBHOOK_MAX_PENDING: '50', PLAYLINE_WEBHOOK_TIMEOUT_MS: '2000', PLAYLINE_WEBHOOK_CONCURRENCY: '2', PLAYLINE_WEBHOOK_POLL_MS: '1000' });
  assert.deepEqual([set.webhookMaxSubscriptions, set.webhookMaxPending, set.webhookTimeoutMs, set.webhookConcurrency, set.webhookPollMs], [3, 50, 2000, 2, 1000]);
  for (const [env, value] of [
    ['PLAYLINE_WEBHOOK_MAX_SUBSCRIPTIONS', '0'],
    ['PLAYLINE_WEBHOOK_MAX_PENDING', '0'],
    ['PLAYLINE_WEBHOOK_TIMEOUT_MS', '60001'],
    ['PLAYLINE_WEBHOOK_CONCURRENCY', '257'],
    ['PLAYLINE_WEBHOOK_POLL_MS', '10'],
  ] as const) {
    assert.throws(() => loadConfig({ [env]: value }), (err: unknown) => err instanceof ConfigError && err.message.includes(env), env);
  }
});

test('low-latency live (the only live output): bounded blocking reloads per instance and per client network', () => {
  const defaults = loadConfig({});
  assert.deepEqual([defaults.liveBlockingReloads, defaults.liveBlockingReloadsPerNetwork], [10000, 64]);
  const set = loadConfig({ PLAYLINE_LIVE_BLOCKING_RELOADS: '100', PLAYLINE_LIVE_BLOCKING_RELOADS_PER_NETWORK: '4' });
  assert.deepEqual([set.liveBlockingReloads, set.liveBlockingReloadsPerNetwork], [100, 4]);
  assert.throws(() => loadConfig({ PLAYLINE_LIVE_BLOCKING_RELOADS: '-1' }), /PLAYLINE_LIVE_BLOCKING_RELOADS \(--live-blocking-reloads\)/);
  assert.throws(() => loadConfig({ PLAYLINE_LIVE_BLOCKING_RELOADS_PER_NETWORK: 'many' }), /PLAYLINE_LIVE_BLOCKING_RELOADS_PER_NETWORK/);
});

test('the media accel prefix (nginx front) is off by default, and only a plain absolute path ending in / is taken', () => {
  assert.equal(loadConfig({}).mediaAccelPrefix, undefined);
  assert.equal(loadConfig({ PLAYLINE_MEDIA_ACCEL_PREFIX: '/_playline_media/' }).mediaAccelPrefix, '/_playline_media/');
  assert.equal(loadConfig({}, { mediaAccelPrefix: '/internal/media/' }).mediaAccelPrefix, '/internal/media/');
  // Not absolute, no trailing slash, a dot segment, a query or an encoded character could point nginx elsewhere.
  for (const bad of ['_playline_media/', '/_playline_media', '/../media/', '/./', '/media/../x/', '/a?b/', '/a%2e/', '//', '/a b/']) {
    assert.throws(() => loadConfig({ PLAYLINE_MEDIA_ACCEL_PREFIX: bad }), /PLAYLINE_MEDIA_ACCEL_PREFIX \(--media-accel-prefix\)/, bad);
  }
});

test('trusted proxies: addresses, CIDRs and named ranges are taken; anything else is refused, naming the setting', () => {
  assert.deepEqual(trustedProxiesOf(loadConfig({})), []);
  const config = loadConfig({ PLAYLINE_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8,fd00::/8, loopback,::1' });
  assert.deepEqual(trustedProxiesOf(config), ['127.0.0.1', '10.0.0.0/8', 'fd00::/8', 'loopback', '::1']);
  for (const bad of ['nginx', '10.0.0.0/33', '::/129', '10.0.0.1/8/1', '*', '10.0.0.0/']) {
    assert.throws(() => loadConfig({ PLAYLINE_TRUSTED_PROXIES: bad }), /PLAYLINE_TRUSTED_PROXIES \(--trusted-proxies\)/, bad);
  }
});

test('DVR window and encoder reconnect grace: 2 h and 30 s by default, bounded, bad values name the setting', () => {
  const d = loadConfig({});
  assert.deepEqual([d.liveDvrWindowS, d.liveReconnectGraceMs], [7200, 30000]);
  const set = loadConfig({ PLAYLINE_LIVE_DVR_WINDOW_S: '0', PLAYLINE_LIVE_RECONNECT_GRACE_MS: '5000' });
  assert.deepEqual([set.liveDvrWindowS, set.liveReconnectGraceMs], [0, 5000]);
  assert.throws(() => loadConfig({ PLAYLINE_LIVE_DVR_WINDOW_S: '43201' }), /PLAYLINE_LIVE_DVR_WINDOW_S \(--live-dvr-window-s\)/);
  assert.throws(() => loadConfig({ PLAYLINE_LIVE_DVR_WINDOW_S: '-1' }), /PLAYLINE_LIVE_DVR_WINDOW_S/);
  assert.throws(() => loadConfig({ PLAYLINE_LIVE_RECONNECT_GRACE_MS: '600001' }), /PLAYLINE_LIVE_RECONNECT_GRACE_MS \(--live-reconnect-grace-ms\)/);
});
