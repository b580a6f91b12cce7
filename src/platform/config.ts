import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { MAX_RENDITIONS } from './media/packaged-manifest.js';

/**
 * Every setting of Playline, described once. Each property carries the environment variable
 * and the CLI flag that set it; `playline serve --help` and the README table come from here.
 */
const setting = <T extends TSchema>(schema: T, env: string, flag: string, description: string) =>
  Type.Unsafe<Static<T>>({ ...schema, env, flag, description });

export const ConfigSchema = Type.Object({
  port: setting(Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }), 'PLAYLINE_PORT', '--port', 'TCP port the API listens on'),
  host: setting(Type.String({ minLength: 1, default: '127.0.0.1' }), 'PLAYLINE_HOST', '--host', 'Interface to bind (0.0.0.0 for all)'),
  dataDir: setting(Type.String({ minLength: 1, default: './data' }), 'PLAYLINE_DATA_DIR', '--data-dir', 'Directory for the embedded SQLite database, the secret key file and the ingest journal'),
  databaseUrl: setting(Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })), 'PLAYLINE_DATABASE_URL', '--database-url', 'PostgreSQL URL; when set, resources and keys live there instead of SQLite'),
  redisUrl: setting(Type.Optional(Type.String({ pattern: '^rediss?://' })), 'PLAYLINE_REDIS_URL', '--redis-url', 'Redis URL for cluster mode (statistics, dedupe, pause state, change feed); cluster mode needs PLAYLINE_DATABASE_URL too'),
  redisPrefix: setting(Type.String({ pattern: '^[A-Za-z0-9:_.-]{1,64}$', default: 'playline:' }), 'PLAYLINE_REDIS_PREFIX', '--redis-prefix', 'Prefix of every Redis key and channel of this deployment (several deployments may share one Redis)'),
  secretKey: setting(Type.Optional(Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$' })), 'PLAYLINE_SECRET_KEY', '--secret-key', 'Base64 32-byte key that encrypts secrets at rest (default: <data dir>/secret.key, created on first start; cluster instances must share one)'),
  timestampToleranceS: setting(Type.Integer({ minimum: 1, maximum: 86400, default: 300 }), 'PLAYLINE_TIMESTAMP_TOLERANCE_S', '--timestamp-tolerance', 'Accepted clock skew of a signed request, in seconds'),
  adminToken: setting(Type.Optional(Type.String({ minLength: 16 })), 'PLAYLINE_ADMIN_TOKEN', '--admin-token', 'Bearer token for the admin API (disabled when unset); at least 16 characters'),
  logLevel: setting(
    Type.Union([Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')], { default: 'info' }),
    'PLAYLINE_LOG_LEVEL', '--log-level', 'Log level: fatal, error, warn, info, debug, trace or silent',
  ),
  shutdownGraceMs: setting(Type.Integer({ minimum: 10, maximum: 600000, default: 10000 }), 'PLAYLINE_SHUTDOWN_GRACE_MS', '--shutdown-grace-ms', 'Time a graceful shutdown (SIGTERM, SIGINT) may take; a shutdown still running then is cut short: the process logs it and exits with code 1'),
  // connections (DESIGN §10: slow clients)
  headersTimeoutMs: setting(Type.Integer({ minimum: 10, maximum: 600000, default: 10000 }), 'PLAYLINE_HEADERS_TIMEOUT_MS', '--headers-timeout-ms', 'Time a client has to send the request line and headers (408 and closed beyond); at most PLAYLINE_REQUEST_TIMEOUT_MS'),
  requestTimeoutMs: setting(Type.Integer({ minimum: 10, maximum: 3600000, default: 30000 }), 'PLAYLINE_REQUEST_TIMEOUT_MS', '--request-timeout-ms', 'Time a client has to send a whole request, body included (a body trickled slower is cut: 408 and closed); streamed uploads get PLAYLINE_STREAMED_BODY_MIN_RATE instead'),
  streamedBodyMinRate: setting(Type.Integer({ minimum: 1, maximum: 1073741824, default: 16384 }), 'PLAYLINE_STREAMED_BODY_MIN_RATE', '--streamed-body-min-rate', 'Bytes per second a streamed upload (POST /api/v4/assets) must average once PLAYLINE_REQUEST_TIMEOUT_MS has passed (slower: 408 and closed)'),
  idleTimeoutMs: setting(Type.Integer({ minimum: 10, maximum: 3600000, default: 60000 }), 'PLAYLINE_IDLE_TIMEOUT_MS', '--idle-timeout-ms', 'A connection without any traffic for this long is closed (keep-alive between requests included)'),
  maxConnectionsPerAddress: setting(Type.Integer({ minimum: 0, maximum: 1000000, default: 256 }), 'PLAYLINE_MAX_CONNECTIONS_PER_ADDRESS', '--max-connections-per-address', 'Open connections one client network may hold: the addresses of one IPv4 /24 or one IPv6 /64 count together (PLAYLINE_CONNECTION_PREFIX_IPV4, PLAYLINE_CONNECTION_PREFIX_IPV6), and at most a quarter of PLAYLINE_MAX_CONNECTIONS (lowered with a warning at start); more are answered 429 too_many_connections and closed (0: no cap; behind a proxy every client shares its address)'),
  connectionPrefixIpv4: setting(Type.Integer({ minimum: 0, maximum: 32, default: 24 }), 'PLAYLINE_CONNECTION_PREFIX_IPV4', '--connection-prefix-ipv4', 'Leading bits of an IPv4 client address (IPv4-mapped IPv6 included) that name the network PLAYLINE_MAX_CONNECTIONS_PER_ADDRESS counts (32: each address alone)'),
  connectionPrefixIpv6: setting(Type.Integer({ minimum: 0, maximum: 128, default: 64 }), 'PLAYLINE_CONNECTION_PREFIX_IPV6', '--connection-prefix-ipv6', 'Leading bits of an IPv6 client address that name the network PLAYLINE_MAX_CONNECTIONS_PER_ADDRESS counts (128: each address alone)'),
  maxConnections: setting(Type.Optional(Type.Integer({ minimum: 1, maximum: 10000000 })), 'PLAYLINE_MAX_CONNECTIONS', '--max-connections', 'Open connections this instance accepts at once (every client together); more are closed at once, unanswered (default and ceiling: half of the open-file limit less PLAYLINE_FD_RESERVE, the limit read from /proc/self/limits, 1024 assumed where there is none; a larger value is lowered to the ceiling with a warning at start)'),
  fdReserve: setting(Type.Integer({ minimum: 0, maximum: 1000000, default: 512 }), 'PLAYLINE_FD_RESERVE', '--fd-reserve', 'File descriptors the connection cap leaves to everything else: the database, logs, media files and processes with their pipes, RTMP ingest fronts, outbound requests (see PLAYLINE_MAX_CONNECTIONS); about 24 go to each managed slicer (its RTMP front and ffmpeg pipes), so keep it at least 128 + 24 x PLAYLINE_MAX_SLICERS'),
  outboundAllowlist: setting(Type.String({ default: '' }), 'PLAYLINE_OUTBOUND_ALLOWLIST', '--outbound-allowlist', 'Comma-separated CIDRs or host names the server may connect to despite the SSRF guard, which otherwise refuses loopback, private, link-local and metadata addresses: callback URLs (delivery and the settings test), publishing pushes and target tests (e.g. 127.0.0.1/32 for a local receiver)'),
  callbackAllowlist: setting(Type.String({ default: '' }), 'PLAYLINE_CALLBACK_ALLOWLIST', '--callback-allowlist', 'Deprecated: the former name of PLAYLINE_OUTBOUND_ALLOWLIST, still read (its entries are added to it) and logged as deprecated at start'),
  // error-reporting
  callbackRatePerS: setting(Type.Integer({ minimum: 1, maximum: 1000000, default: 500 }), 'PLAYLINE_CALLBACK_RATE', '--callback-rate', 'Error reports per second sent to one callback endpoint (token bucket; the burst is the same number)'),
  callbackQueueSize: setting(Type.Integer({ minimum: 1, maximum: 100000, default: 1000 }), 'PLAYLINE_CALLBACK_QUEUE', '--callback-queue', 'Error reports waiting per callback endpoint; more are dropped and counted as throttled'),
  callbackConcurrency: setting(Type.Integer({ minimum: 1, maximum: 256, default: 32 }), 'PLAYLINE_CALLBACK_CONCURRENCY', '--callback-concurrency', 'Callback requests in flight (and keep-alive connections) per endpoint'),
  callbackThread: setting(Type.Boolean({ default: true }), 'PLAYLINE_CALLBACK_THREAD', '--callback-thread', 'Send callbacks from a thread of their own (true), so delivery neither waits for nor slows the event loop that serves the API and ingest; false sends them from the main thread'),
  callbackTimeoutMs: setting(Type.Integer({ minimum: 100, maximum: 60000, default: 5000 }), 'PLAYLINE_CALLBACK_TIMEOUT_MS', '--callback-timeout-ms', 'Time a callback receiver has to answer (delivery and the settings test)'),
  callbackBackoffMs: setting(Type.Integer({ minimum: 10, maximum: 3600000, default: 1000 }), 'PLAYLINE_CALLBACK_BACKOFF_MS', '--callback-backoff-ms', 'Pause of a callback endpoint after a non-200 or a reset (five times as long after a connect error, timeout or TLS failure), doubling per consecutive failure up to PLAYLINE_CALLBACK_BACKOFF_MAX_MS'),
  callbackBackoffMaxMs: setting(Type.Integer({ minimum: 10, maximum: 3600000, default: 120000 }), 'PLAYLINE_CALLBACK_BACKOFF_MAX_MS', '--callback-backoff-max-ms', 'Longest pause of a callback endpoint after consecutive failures (an operator can end it at once: POST /api/v4/error-reporting/settings/resume)'),
  deliveryLogRetentionH: setting(Type.Integer({ minimum: 1, maximum: 8760, default: 168 }), 'PLAYLINE_DELIVERY_LOG_RETENTION_H', '--delivery-log-retention-h', 'Hours a callback delivery attempt (with its body and signature headers) stays in the delivery log; older ones are deleted by a background sweep'),
  deliveryLogMaxPerWorkspace: setting(Type.Integer({ minimum: 1, maximum: 10000000, default: 10000 }), 'PLAYLINE_DELIVERY_LOG_MAX_PER_WORKSPACE', '--delivery-log-max-per-workspace', 'Delivery attempts kept per workspace in the delivery log; the sweep deletes the oldest beyond'),
  deliveryLogWriteRate: setting(Type.Integer({ minimum: 1, maximum: 1000000, default: 2000 }), 'PLAYLINE_DELIVERY_LOG_WRITE_RATE', '--delivery-log-write-rate', 'Delivery attempts written to the delivery log per second by one instance (a cap on the log\'s share of the event loop); more wait in the queue'),
  deliveryLogQueue: setting(Type.Integer({ minimum: 1, maximum: 1000000, default: 10000 }), 'PLAYLINE_DELIVERY_LOG_QUEUE', '--delivery-log-queue', 'Delivery attempts waiting to be written to the delivery log (in batches, off the delivery path); beyond, attempts are left out of the log and counted (delivery never waits)'),
  // operational event webhooks (issue 30 part 4; docs/webhooks.md)
  webhookMaxSubscriptions: setting(Type.Integer({ minimum: 1, maximum: 10000, default: 20 }), 'PLAYLINE_WEBHOOK_MAX_SUBSCRIPTIONS', '--webhook-max-subscriptions', 'Webhook subscriptions (endpoints subscribed to operational events) one workspace may hold; creating one more answers 409 quota_exceeded'),
  webhookMaxPending: setting(Type.Integer({ minimum: 1, maximum: 1000000, default: 1000 }), 'PLAYLINE_WEBHOOK_MAX_PENDING', '--webhook-max-pending', 'Events waiting for delivery (or their next retry) per webhook subscription; storing one more drops the oldest, logged as dropped (overflow) and counted in playline_webhook_failed_total{reason="overflow"}'),
  webhookTimeoutMs: setting(Type.Integer({ minimum: 100, maximum: 60000, default: 15000 }), 'PLAYLINE_WEBHOOK_TIMEOUT_MS', '--webhook-timeout-ms', 'Time a webhook endpoint has to answer one attempt (connect, headers and body; at most 64 KiB of the answer is read); beyond, the attempt fails as timeout and is retried on the schedule'),
  webhookConcurrency: setting(Type.Integer({ minimum: 1, maximum: 256, default: 8 }), 'PLAYLINE_WEBHOOK_CONCURRENCY', '--webhook-concurrency', 'Webhook attempts one instance has in flight at once (every endpoint together)'),
  webhookResendLimit: setting(Type.Integer({ minimum: 1, maximum: 100000, default: 30 }), 'PLAYLINE_WEBHOOK_RESEND_LIMIT', '--webhook-resend-limit', 'Webhook resends (POST /api/v4/webhooks/attempts/<id>/resend) one workspace may make per minute on one instance, at most 4 of them in flight at once; beyond, 429 throttled with Retry-After'),
  webhookPollMs: setting(Type.Integer({ minimum: 100, maximum: 600000, default: 5000 }), 'PLAYLINE_WEBHOOK_POLL_MS', '--webhook-poll-ms', 'How often an instance looks for webhook attempts due that it has no timer for (stored by another instance, or left by one that died once its lease expired)'),
  maxAssetsPerWorkspace: setting(Type.Integer({ minimum: 1, maximum: 10000000, default: 100000 }), 'PLAYLINE_MAX_ASSETS_PER_WORKSPACE', '--max-assets-per-workspace', 'Distinct assets one workspace may hold in its statistics; events for new assets beyond are rejected (asset_limit_reached) and counted as dropped'),
  ingestMaxBytesInFlight: setting(Type.Integer({ minimum: 1048576, maximum: 4294967296, default: 67108864 }), 'PLAYLINE_INGEST_MAX_BYTES_IN_FLIGHT', '--ingest-max-bytes-in-flight', 'Event batch bytes being received or ingested at once by one instance (by Content-Length); beyond, ingest answers 503 with Retry-After before reading the body (one batch is always admitted)'),
  statsRebuildOnMismatch: setting(Type.Boolean({ default: true }), 'PLAYLINE_STATS_REBUILD_ON_MISMATCH', '--stats-rebuild-on-mismatch', 'Cluster mode: when Redis holds statistics bound to another deployment or journal epoch (a shared prefix, a new or restored database), rebuild them from this journal (true) or refuse to start and count nothing (false)'),
  statsDelayMs: setting(Type.Integer({ minimum: 0, maximum: 600000, default: 0 }), 'PLAYLINE_STATS_DELAY_MS', '--stats-delay-ms', 'Delay before an accepted event is visible to statistics queries (the original platform: 180000)'),
  slicerProvisionMs: setting(Type.Integer({ minimum: 0, maximum: 3600000, default: 2000 }), 'PLAYLINE_SLICER_PROVISION_MS', '--slicer-provision-ms', 'How long the simulated slicer provisioner takes per task'),
  slicerFailureRate: setting(Type.Number({ minimum: 0, maximum: 1, default: 0 }), 'PLAYLINE_SLICER_FAILURE_RATE', '--slicer-failure-rate', 'Share of simulated slicer tasks that fail (0 to 1)'),
  slicerLeaseMs: setting(Type.Integer({ minimum: 1000, maximum: 600000, default: 30000 }), 'PLAYLINE_SLICER_LEASE_MS', '--slicer-lease-ms', 'How long a slicer task stays claimed by an instance that stopped renewing it (cluster mode: takeover time after an instance dies)'),
  slicerProvisioner: setting(
    Type.Union([Type.Literal('auto'), Type.Literal('ffmpeg'), Type.Literal('simulated')], { default: 'auto' }),
    'PLAYLINE_SLICER_PROVISIONER', '--slicer-provisioner', 'How slicers run: ffmpeg (a supervised ffmpeg process per slicer), simulated (timers only, no stream is received: PLAYLINE_SLICER_PROVISION_MS, PLAYLINE_SLICER_FAILURE_RATE; demos and tests), or auto (the same as ffmpeg: without ffmpeg, creating a slicer answers 503 media_tools_missing)',
  ),
  slicerPorts: setting(Type.String({ pattern: '^\\s*[0-9]{1,5}\\s*-\\s*[0-9]{1,5}\\s*$', default: '20000-20099' }), 'PLAYLINE_SLICER_PORTS', '--slicer-ports', 'Port range (from-to) the ingest listeners of ffmpeg slicers take, one port each (RIST: an even port and the next)'),
  slicerBindHost: setting(Type.Optional(Type.String({ minLength: 1 })), 'PLAYLINE_SLICER_BIND_HOST', '--slicer-bind-host', 'Interface the ingest listeners of ffmpeg slicers bind (default: PLAYLINE_HOST, the API\'s; 0.0.0.0 exposes them on every interface)'),
  publicHost: setting(Type.Optional(Type.String({ minLength: 1, maxLength: 253 })), 'PLAYLINE_PUBLIC_HOST', '--public-host', 'Host name or address encoders reach this instance at, named in slicer ingest URLs (default: PLAYLINE_HOST, or 127.0.0.1 when that binds every interface)'),
  maxSlicers: setting(Type.Integer({ minimum: 1, maximum: 10000, default: 64 }), 'PLAYLINE_MAX_SLICERS', '--max-slicers', 'Managed slicers the deployment holds over every workspace (creating one more answers 409 conflict); a second line behind each workspace\'s PLAYLINE_QUOTA_SLICERS, so keep it above that'),
  hlsPushMaxBytesInFlight: setting(Type.Integer({ minimum: 1048576, maximum: 17179869184, default: 268435456 }), 'PLAYLINE_HLS_PUSH_MAX_BYTES_IN_FLIGHT', '--hls-push-max-bytes-in-flight', 'Bytes of files pushed to hls slicers being received at once by one instance (declared by Content-Length, or counted as they arrive); beyond, a push answers 503 with Retry-After'),
  slicerStallMs: setting(Type.Integer({ minimum: 1000, maximum: 600000, default: 10000 }), 'PLAYLINE_SLICER_STALL_MS', '--slicer-stall-ms', 'Time an ffmpeg slicer may go without media from a source that sent some; beyond, the source counts as gone: live.state shows waiting_for_source and the ffmpeg is ended and listens afresh at once (a slicer with no source yet waits as long as it takes)'),
  ingestFailurePauseMs: setting(Type.Integer({ minimum: 0, maximum: 3600000, default: 2000 }), 'PLAYLINE_INGEST_FAILURE_PAUSE_MS', '--ingest-failure-pause-ms', 'After an encoder presented a wrong stream key (RTMP stream name, hls push token; SRT/RIST listeners check theirs in ffmpeg), everything from its address is refused for this long, whatever key it presents (one guess per pause; counted in playline_ingest_refusals_total{reason="paused"}); 0: no pause'),
  ristIdleMs: setting(Type.Integer({ minimum: 1000, maximum: 600000, default: 5000 }), 'PLAYLINE_RIST_IDLE_MS', '--rist-idle-ms', 'RIST ingest front: how long the admitted sender may send nothing that decrypts under the stream key before another sender with the key may take the slicer over'),
  ristCandidatePps: setting(Type.Integer({ minimum: 10, maximum: 100000, default: 200 }), 'PLAYLINE_RIST_CANDIDATE_PPS', '--rist-candidate-pps', 'RIST ingest front: datagrams a second one sender (address and port) that is not admitted may send to a slicer\'s port; the rest are dropped unread'),
  ristKeyDerivationsPerS: setting(Type.Integer({ minimum: 1, maximum: 1000, default: 20 }), 'PLAYLINE_RIST_KEY_DERIVATIONS_PER_S', '--rist-key-derivations-per-s', 'RIST ingest front: AES keys a slicer\'s front derives a second (PBKDF2, about 1 ms each) for GRE nonces it has not seen, over every sender; datagrams beyond are dropped'),
  ristMaxSenders: setting(Type.Integer({ minimum: 1, maximum: 100000, default: 256 }), 'PLAYLINE_RIST_MAX_SENDERS', '--rist-max-senders', 'RIST ingest front: senders (address and port) a slicer\'s front tracks before admitting one; a new one makes it forget the least recent'),
  slicerWindowSegments: setting(Type.Integer({ minimum: 3, maximum: 100, default: 6 }), 'PLAYLINE_SLICER_WINDOW_SEGMENTS', '--slicer-window-segments', 'Segments (2 s each) in the rolling live window an ffmpeg slicer keeps'),
  liveDvrWindowS: setting(Type.Integer({ minimum: 0, maximum: 43200, default: 7200 }), 'PLAYLINE_LIVE_DVR_WINDOW_S', '--live-dvr-window-s', 'DVR: the default and the largest dvr_window_s of a slicer: seconds of segments each low-latency live media playlist keeps listing behind the live edge, so players can seek back while the event runs (files deleted as they leave it; a sliding window, no PLAYLIST-TYPE); parts only near the edge; 0: the short window of PLAYLINE_SLICER_WINDOW_SEGMENTS. Counts against the workspace storage quota like the live window'),
  liveReconnectGraceMs: setting(Type.Integer({ minimum: 0, maximum: 600000, default: 30000 }), 'PLAYLINE_LIVE_RECONNECT_GRACE_MS', '--live-reconnect-grace-ms', 'Encoder drop-outs: an encoder back within this time continues the same event (the live playlists go on after EXT-X-DISCONTINUITY, nothing deleted; live.state shows reconnecting meanwhile; no new live.started); past it the event ends (live.ended) and the next push starts a new window. 0: every reconnect is a new event. LL-HLS only for the playlists'),
  liveBlockingReloads: setting(Type.Integer({ minimum: 0, maximum: 1000000, default: 10000 }), 'PLAYLINE_LIVE_BLOCKING_RELOADS', '--live-blocking-reloads', 'LL-HLS blocking playlist reloads (_HLS_msn) one instance holds at once, every client together; more are answered 503 with Retry-After at once (0: none held, every blocking reload is answered 503)'),
  liveBlockingReloadsPerNetwork: setting(Type.Integer({ minimum: 0, maximum: 1000000, default: 64 }), 'PLAYLINE_LIVE_BLOCKING_RELOADS_PER_NETWORK', '--live-blocking-reloads-per-network', 'LL-HLS blocking playlist reloads held at once for one client network (an IPv4 /24 or IPv6 /64, PLAYLINE_CONNECTION_PREFIX_IPV4/IPV6); more are answered 429 with Retry-After at once (a player holds one per rendition it plays)'),
  hlsPushMaxFiles: setting(Type.Integer({ minimum: 2, maximum: 100000, default: 200 }), 'PLAYLINE_HLS_PUSH_MAX_FILES', '--hls-push-max-files', 'Files the input folder of one hls slicer may hold (pushed playlists and segments); a PUT of one more answers 409 quota_exceeded (the encoder must DELETE old segments, e.g. ffmpeg -hls_flags delete_segments)'),
  hlsPushMaxFolderBytes: setting(Type.Integer({ minimum: 1048576, maximum: 1099511627776, default: 536870912 }), 'PLAYLINE_HLS_PUSH_MAX_FOLDER_BYTES', '--hls-push-max-folder-bytes', 'Bytes the input folder of one hls slicer may hold; a PUT that would pass it answers 507 storage_quota_exceeded'),
  publisher: setting(
    Type.Union([Type.Literal('ffmpeg'), Type.Literal('simulated')], { default: 'ffmpeg' }),
    'PLAYLINE_PUBLISHER', '--publisher', 'How started publishing schedules are carried out: ffmpeg (a supervised push of the live content to the target; 503 media_tools_missing without ffmpeg) or simulated (every start succeeds, nothing is sent: demos and tests)',
  ),
  platformIngest: setting(Type.String({ default: '{}' }), 'PLAYLINE_PLATFORM_INGEST', '--platform-ingest', 'JSON object of RTMP(S) ingest servers per social platform, replacing the built-in ones, e.g. {"Twitch":"rtmp://ingest.example:1935/app/"} (TikTok has none built in: each stream gets its own server)'),
  publishStallMs: setting(Type.Integer({ minimum: 1000, maximum: 600000, default: 20000 }), 'PLAYLINE_PUBLISH_STALL_MS', '--publish-stall-ms', 'Time a publishing push has to get its first frames accepted by the destination, and then to keep them flowing; beyond, its ffmpeg is ended, the schedule goes to error and the push is retried after the backoff (PLAYLINE_MEDIA_RESTART_BACKOFF_MS)'),
  regions: setting(Type.String({ minLength: 1, default: 'us-west-2,us-east-1,eu-central-1,ap-southeast-2' }), 'PLAYLINE_REGIONS', '--regions', 'Comma-separated region names offered to publishing schedules and slicers'),
  // supervised media processes (ffmpeg slicers and publishing pushes)
  mediaRestartBackoffMs: setting(Type.Integer({ minimum: 10, maximum: 3600000, default: 1000 }), 'PLAYLINE_MEDIA_RESTART_BACKOFF_MS', '--media-restart-backoff-ms', 'Wait before a supervised ffmpeg (an ffmpeg slicer, a publishing push) that failed is started again, doubling per failure in a row up to PLAYLINE_MEDIA_RESTART_BACKOFF_MAX_MS; a run that made progress starts the count again'),
  mediaRestartBackoffMaxMs: setting(Type.Integer({ minimum: 10, maximum: 3600000, default: 30000 }), 'PLAYLINE_MEDIA_RESTART_BACKOFF_MAX_MS', '--media-restart-backoff-max-ms', 'Longest wait before a supervised ffmpeg that keeps failing is started again'),
  mediaKillGraceMs: setting(Type.Integer({ minimum: 0, maximum: 60000, default: 3000 }), 'PLAYLINE_MEDIA_KILL_GRACE_MS', '--media-kill-grace-ms', 'Time a supervised ffmpeg has to exit after SIGTERM (stop, delete, stall, shutdown) before it is killed with SIGKILL; 0 kills at once'),
  // quotas per workspace (refusals: 409 quota_exceeded, 507 storage_quota_exceeded; usage: GET /api/v4/workspace/usage)
  quotaStorageBytes: setting(Type.Integer({ minimum: 1048576, maximum: 1125899906842624, default: 107374182400 }), 'PLAYLINE_QUOTA_STORAGE_BYTES', '--quota-storage-bytes', 'Media bytes one workspace may store: asset uploads (counted while they arrive), packaged assets, live windows and hls-push input of its slicers; an upload or push that would pass it answers 507 storage_quota_exceeded'),
  quotaAssets: setting(Type.Integer({ minimum: 1, maximum: 10000000, default: 10000 }), 'PLAYLINE_QUOTA_ASSETS', '--quota-assets', 'Assets one workspace may hold in its media library (uploads beyond answer 409 quota_exceeded)'),
  quotaSlicers: setting(Type.Integer({ minimum: 1, maximum: 10000, default: 16 }), 'PLAYLINE_QUOTA_SLICERS', '--quota-slicers', 'Managed slicers one workspace may hold (creating one more answers 409 quota_exceeded); PLAYLINE_MAX_SLICERS caps the deployment as a whole'),
  quotaTargets: setting(Type.Integer({ minimum: 1, maximum: 1000000, default: 100 }), 'PLAYLINE_QUOTA_TARGETS', '--quota-targets', 'Publishing targets one workspace may hold (creating one more answers 409 quota_exceeded)'),
  quotaSchedules: setting(Type.Integer({ minimum: 1, maximum: 1000000, default: 200 }), 'PLAYLINE_QUOTA_SCHEDULES', '--quota-schedules', 'Publishing schedules one workspace may hold (creating one more answers 409 quota_exceeded)'),
  quotaActivePushes: setting(Type.Integer({ minimum: 1, maximum: 10000, default: 8 }), 'PLAYLINE_QUOTA_ACTIVE_PUSHES', '--quota-active-pushes', 'Started publishing schedules (active, or in error and retrying: one ffmpeg push each) one workspace may have at once; starting one more answers 409 quota_exceeded, and one beyond at resume is stopped with the reason'),
  // playback-edge
  playbackRefusalLimit: setting(Type.Integer({ minimum: 0, maximum: 1000000, default: 60 }), 'PLAYLINE_PLAYBACK_REFUSAL_LIMIT', '--playback-refusal-limit', 'Refused playbacks (4xx) counted and reported per client address and window; beyond, refusals answer 429 with no event and no Error Report, valid playbacks are still served (0 turns the limit off; cluster mode counts in Redis across instances)'),
  playbackRefusalWindowS: setting(Type.Integer({ minimum: 1, maximum: 86400, default: 60 }), 'PLAYLINE_PLAYBACK_REFUSAL_WINDOW_S', '--playback-refusal-window-s', 'Window of the refused-playback limit, in seconds (fixed, from the first refusal counted)'),
  playbackMaxLifetimeS: setting(Type.Integer({ minimum: 60, maximum: 86400, default: 21600 }), 'PLAYLINE_PLAYBACK_MAX_LIFETIME_S', '--playback-max-lifetime-s', 'Longest a signed playback URL may live: an exp further ahead than this is refused (101, 400); the playback session it opens (/play/s/...) ends with it. At most a day, the time single-use claims (pbs, DRM signatures) are remembered'),
  playbackSingleUseCapacity: setting(Type.Integer({ minimum: 1, maximum: 10000000, default: 100000 }), 'PLAYLINE_PLAYBACK_SINGLE_USE_CAPACITY', '--playback-single-use-capacity', 'Single-use values (pbs sessions; DRM URL signatures) remembered per workspace, each kind, in the embedded mode; when one workspace\'s share is full its own oldest is forgotten (cluster mode keeps them in Redis until the URL expires)'),
  mediaAccelPrefix: setting(
    Type.Optional(Type.String({ pattern: '^/([A-Za-z0-9_-][A-Za-z0-9._-]{0,63}/){1,8}$' })),
    'PLAYLINE_MEDIA_ACCEL_PREFIX', '--media-accel-prefix',
    'Behind an nginx front (deploy/README.md): a session\'s init and media segments are answered, once their token is checked, with an empty 200 carrying X-Accel-Redirect: <prefix><path below the media root>, for nginx to send the file from an internal location mapped to the media root (e.g. /_playline_media/); unset: Playline sends the bytes itself. Only set it when clients reach /play through that front alone',
  ),
  trustedProxies: setting(Type.String({ default: '' }), 'PLAYLINE_TRUSTED_PROXIES', '--trusted-proxies', 'Comma-separated addresses or CIDRs of the reverse proxies in front of this instance (or loopback, linklocal, uniquelocal): a request from one of them is taken to come from the client its X-Forwarded-For names (playback ip binding, refusal limits, Error Reports, access lines) over the X-Forwarded-Proto and X-Forwarded-Host it sends; empty: the connection\'s own address'),
  // assets (media library)
  mediaDir: setting(Type.Optional(Type.String({ minLength: 1 })), 'PLAYLINE_MEDIA_DIR', '--media-dir', 'Directory of uploaded and packaged media (default: <data dir>/media); cluster mode: one directory shared by every instance, required when ffmpeg is present'),
  ffmpegPath: setting(Type.String({ minLength: 1, default: 'ffmpeg' }), 'PLAYLINE_FFMPEG_PATH', '--ffmpeg-path', 'The ffmpeg executable (a name looked up in PATH, or a path); without it the media routes answer 503 media_tools_missing'),
  ffprobePath: setting(Type.String({ minLength: 1, default: 'ffprobe' }), 'PLAYLINE_FFPROBE_PATH', '--ffprobe-path', 'The ffprobe executable (a name looked up in PATH, or a path); without it the media routes answer 503 media_tools_missing'),
  maxUploadBytes: setting(Type.Integer({ minimum: 1, maximum: 1099511627776, default: 4294967296 }), 'PLAYLINE_MAX_UPLOAD_BYTES', '--max-upload-bytes', 'Largest media upload accepted, in bytes (413 beyond; the partial file is removed)'),
  packagingLadder: setting(Type.String({ pattern: '^\\s*[0-9]{3,4}p\\s*(,\\s*[0-9]{3,4}p\\s*)*$', default: '1080p,720p,360p' }), 'PLAYLINE_PACKAGING_LADDER', '--packaging-ladder', `HLS renditions packaged per asset, by picture height (the short side): those at or below the source; a source below every rung gets one rendition at its own size; at most ${MAX_RENDITIONS} rungs, each named once`),
  packagingConcurrency: setting(Type.Integer({ minimum: 1, maximum: 64, default: 1 }), 'PLAYLINE_PACKAGING_CONCURRENCY', '--packaging-concurrency', 'Packaging jobs (ffmpeg runs, CPU bound) at once per instance'),
  packagingPreset: setting(
    Type.Union(['ultrafast', 'superfast', 'veryfast', 'faster', 'fast', 'medium', 'slow', 'slower', 'veryslow'].map((p) => Type.Literal(p)), { default: 'veryfast' }),
    'PLAYLINE_PACKAGING_PRESET', '--packaging-preset', 'x264 preset of packaging: faster presets use less CPU for a larger file at the same quality (ultrafast ... veryslow)',
  ),
  packagingLeaseMs: setting(Type.Integer({ minimum: 1000, maximum: 600000, default: 30000 }), 'PLAYLINE_PACKAGING_LEASE_MS', '--packaging-lease-ms', 'How long a packaging job stays claimed by an instance that stopped renewing it (cluster mode: takeover time after an instance dies)'),
  // packaging budgets (N7): a source over them fails before any encoding; a run over them is ended and fails (never retried)
  packagingMaxDurationS: setting(Type.Integer({ minimum: 1, maximum: 800000, default: 14400 }), 'PLAYLINE_PACKAGING_MAX_DURATION_S', '--packaging-max-duration-s', 'Longest source packaged, in seconds of its declared duration (a timestamp gap counts in full: a few frames, then one at 2 h, is a 2 h video); longer ends failed before any encoding'),
  packagingMaxFrames: setting(Type.Integer({ minimum: 1, maximum: 1000000000, default: 864000 }), 'PLAYLINE_PACKAGING_MAX_FRAMES', '--packaging-max-frames', 'Most video frames one packaging may encode (declared duration x packaged frame rate) or decode (the frame count the file declares); more ends failed before any encoding'),
  packagingMaxGapS: setting(Type.Integer({ minimum: 0, maximum: 800000, default: 60 }), 'PLAYLINE_PACKAGING_MAX_GAP_S', '--packaging-max-gap-s', 'Longest time without a video frame a source may hold, in seconds (its video packets are read, not decoded, before packaging: a few frames then one at 2 h is refused, since packaging would fill the gap with repeated frames); longer ends failed before any encoding (0: no limit)'),
  packagingMaxOutputBytes: setting(Type.Integer({ minimum: 1048576, maximum: 1099511627776, default: 34359738368 }), 'PLAYLINE_PACKAGING_MAX_OUTPUT_BYTES', '--packaging-max-output-bytes', 'Most bytes one packaging job may write (all renditions together; checked every second while ffmpeg runs); beyond, ffmpeg is ended and the asset fails'),
  packagingTimeFactor: setting(Type.Number({ minimum: 0.01, maximum: 1000, default: 8 }), 'PLAYLINE_PACKAGING_TIME_FACTOR', '--packaging-time-factor', 'CPU-time budget of one packaging job (its ffmpeg processes, every thread counted), in CPU seconds per second of output at 30 fps (a higher output rate counts in proportion; at least PLAYLINE_PACKAGING_MIN_TIME_S); beyond, ffmpeg is ended and the asset fails, its upload kept for a retry. CPU time, so a loaded machine does not trip it (measured: about 0.9 CPU s per second of 720p30 at the veryfast preset)'),
  packagingMinTimeS: setting(Type.Integer({ minimum: 1, maximum: 86400, default: 120 }), 'PLAYLINE_PACKAGING_MIN_TIME_S', '--packaging-min-time-s', 'CPU-time budget of a packaging job of a short source, in CPU seconds (the budget is the larger of this and PLAYLINE_PACKAGING_TIME_FACTOR x output duration x rate / 30)'),
  mediaMaxStreams: setting(Type.Integer({ minimum: 1, maximum: 1000, default: 8 }), 'PLAYLINE_MEDIA_MAX_STREAMS', '--media-max-streams', 'Most streams (video, audio, subtitles, data) an uploaded file may hold; counted from its header before it is probed in full, more ends failed (each stream is probed and decoded: many of them are a memory bomb)'),
  mediaMemoryLimitMb: setting(Type.Optional(Type.Integer({ minimum: 0, maximum: 1048576 })), 'PLAYLINE_MEDIA_MEMORY_LIMIT_MB', '--media-memory-limit-mb', 'Virtual memory (RLIMIT_AS, set with prlimit from util-linux) each media process may map, in MiB: ffprobe, packaging, slicers and pushes; one that needs more fails alone (default: 2048 + 256 per CPU core, since x264 maps about 100 MiB per thread; 0: no limit)'),
});

export type Config = Static<typeof ConfigSchema>;
export type ConfigKey = keyof Config;

interface SettingMeta {
  key: ConfigKey;
  env: string;
  flag: string;
  description: string;
  default: unknown;
  type: string;
}

/** The settings table: one row per setting, in declaration order. */
export const settings: SettingMeta[] = Object.entries(ConfigSchema.properties).map(([key, schema]) => {
  const s = schema as TSchema & { env: string; flag: string; description: string; default?: unknown; type?: string; anyOf?: unknown };
  return { key: key as ConfigKey, env: s.env, flag: s.flag, description: s.description, default: s.default, type: s.type ?? 'string' };
});

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Builds the configuration from environment variables, overridden by CLI flag values
 * (already keyed by setting name), and checks it against the schema. A bad value throws a
 * ConfigError naming the setting, its variable and its flag.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, flags: Partial<Record<ConfigKey, unknown>> = {}): Config {
  const raw: Record<string, unknown> = {};
  for (const s of settings) {
    const fromFlag = flags[s.key];
    const fromEnv = env[s.env];
    const value = fromFlag !== undefined ? fromFlag : fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined;
    if (value !== undefined) raw[s.key] = value;
  }
  const withDefaults = Value.Default(ConfigSchema, raw) as Record<string, unknown>;
  const converted = Value.Convert(ConfigSchema, withDefaults) as Record<string, unknown>;
  const first = Value.Errors(ConfigSchema, converted).First();
  if (first) {
    const key = first.path.split('/')[1] as ConfigKey | undefined;
    const meta = settings.find((s) => s.key === key);
    const shown = key === 'secretKey' || key === 'adminToken' ? '(hidden)' : JSON.stringify(raw[key ?? '']);
    const name = meta ? `${meta.env} (${meta.flag})` : first.path;
    throw new ConfigError(`Invalid setting ${name}: ${first.message}; got ${shown}. ${meta?.description ?? ''}`.trim());
  }
  if ((converted.headersTimeoutMs as number) > (converted.requestTimeoutMs as number)) {
    throw new ConfigError(`PLAYLINE_HEADERS_TIMEOUT_MS (--headers-timeout-ms) is ${String(converted.headersTimeoutMs)} but must not exceed PLAYLINE_REQUEST_TIMEOUT_MS (--request-timeout-ms), ${String(converted.requestTimeoutMs)}: the headers are part of the request.`);
  }
  // Cluster mode shares both the database and Redis; one without the other is a half cluster.
  if ((converted.databaseUrl === undefined) !== (converted.redisUrl === undefined)) {
    const [set, missing] = converted.databaseUrl === undefined ? ['PLAYLINE_REDIS_URL (--redis-url)', 'PLAYLINE_DATABASE_URL (--database-url)'] : ['PLAYLINE_DATABASE_URL (--database-url)', 'PLAYLINE_REDIS_URL (--redis-url)'];
    throw new ConfigError(`Cluster mode needs PostgreSQL and Redis: ${set} is set but ${missing} is not. Set both for cluster mode, or neither for the embedded mode.`);
  }
  // The former name of the outbound allow-list still works: its entries join the new one's.
  const former = converted.callbackAllowlist as string;
  if (former.trim() !== '') converted.outboundAllowlist = [converted.outboundAllowlist as string, former].filter((list) => list.trim() !== '').join(',');
  const config = converted as Config;
  packagingLadderOf(config);
  trustedProxiesOf(config);
  return config;
}

/**
 * How Playline is deployed: one process with SQLite and files (`embedded`), or several
 * instances sharing PostgreSQL and Redis (`cluster`). `loadConfig` accepts both URLs or
 * neither, so Redis alone decides; the runtime computes this once and modules read it there.
 */
export type DeploymentMode = 'embedded' | 'cluster';

export const deploymentModeOf = (config: Pick<Config, 'redisUrl'>): DeploymentMode => (config.redisUrl === undefined ? 'embedded' : 'cluster');


export const listSetting = (value: string): string[] =>
  value.split(',').map((v) => v.trim()).filter((v) => v.length > 0);

/**
 * PLAYLINE_PACKAGING_LADDER as rung heights, highest first. A ladder that could package an asset
 * the playback edge refuses throws a ConfigError naming the setting: more rungs than a packaged
 * manifest holds (MAX_RENDITIONS), or one rung twice (two renditions of one name).
 */
export function packagingLadderOf(config: Pick<Config, 'packagingLadder'>): number[] {
  const refuse = (problem: string) =>
    new ConfigError(`Invalid setting PLAYLINE_PACKAGING_LADDER (--packaging-ladder): ${problem}; got ${JSON.stringify(config.packagingLadder)}.`);
  const names = listSetting(config.packagingLadder);
  if (names.length === 0) throw refuse('no rung');
  if (names.length > MAX_RENDITIONS) throw refuse(`${names.length} rungs, but a packaged asset holds at most ${MAX_RENDITIONS} renditions`);
  const rungs = names.map((name) => {
    const height = /^[0-9]{3,4}p$/.test(name) ? Number.parseInt(name, 10) : 0;
    if (height <= 0) throw refuse(`${name} is not a picture height such as 720p`);
    return height;
  });
  const twice = rungs.find((r, i) => rungs.indexOf(r) !== i);
  if (twice !== undefined) throw refuse(`${twice}p is named twice (one rendition per rung)`);
  return rungs.sort((a, b) => b - a);
}

/**
 * PLAYLINE_MEDIA_MEMORY_LIMIT_MB in bytes (0: no limit). Unset, it grows with the CPU cores: x264
 * starts 1.5 threads per core in each rendition's encoder, and each maps about 100 MiB of address
 * space (a 1080p ladder measured 1.2 GiB at 3 threads, 3.8 GiB at 24, 5.9 GiB at 48), so a fixed
 * limit would either fail honest packaging on a large machine or bound nothing on a small one.
 */
export function mediaMemoryLimitBytesOf(config: Pick<Config, 'mediaMemoryLimitMb'>, cores = availableParallelism()): number {
  const mb = config.mediaMemoryLimitMb ?? 2048 + 256 * cores;
  return mb * 1024 * 1024;
}

const PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * PLAYLINE_TRUSTED_PROXIES as the list Fastify's trustProxy takes (empty: trust none). Each entry
 * is an address, a CIDR or a named range; anything else throws a ConfigError naming the setting,
 * since a typo would silently trust no proxy (or, worse, the wrong one).
 */
export function trustedProxiesOf(config: Pick<Config, 'trustedProxies'>): string[] {
  const entries = listSetting(config.trustedProxies);
  for (const entry of entries) {
    const [address = '', bits, extra] = entry.split('/');
    const family = isIP(address);
    const max = family === 6 ? 128 : 32;
    const validBits = bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= max);
    if (PROXY_RANGES.has(entry) || (family !== 0 && validBits && extra === undefined)) continue;
    throw new ConfigError(`Invalid setting PLAYLINE_TRUSTED_PROXIES (--trusted-proxies): ${JSON.stringify(entry)} is not an address, a CIDR, loopback, linklocal or uniquelocal.`);
  }
  return entries;
}
