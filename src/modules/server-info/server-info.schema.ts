import { Type, type Static } from '@sinclair/typebox';

export const ServerSettingsSchema = Type.Object(
  {
    '@id': Type.Literal('/api/v4/server'),
    '@type': Type.Literal('ServerSettings'),
    version: Type.String(),
    mode: Type.Union([Type.Literal('embedded'), Type.Literal('cluster')], { description: 'embedded: one process on SQLite; cluster: instances on PostgreSQL and Redis' }),
    ingest: Type.Object({
      public_host: Type.String({ description: 'The host named in ingest URLs (PLAYLINE_PUBLIC_HOST): encoders must reach this instance there' }),
      port_range: Type.String({ description: 'Ports the SRT, RTMP and RIST listeners take (PLAYLINE_SLICER_PORTS): open them in the firewall' }),
      slicer_provisioner: Type.String({ description: 'ffmpeg (real slicers) or simulated' }),
      dvr_window_max_s: Type.Integer({ description: 'The largest DVR window of a slicer (PLAYLINE_LIVE_DVR_WINDOW_S)' }),
      reconnect_grace_ms: Type.Integer({ description: 'An encoder back within this time continues the event (PLAYLINE_LIVE_RECONNECT_GRACE_MS)' }),
    }),
    outbound_allowlist: Type.Array(Type.String(), { description: 'Addresses the SSRF guard lets callbacks, webhooks and pushes reach although they are loopback or private (PLAYLINE_OUTBOUND_ALLOWLIST); empty: public addresses only' }),
    media_tools: Type.Object({
      available: Type.Boolean({ description: 'Whether ffmpeg and ffprobe were found: without them the asset library, slicers and pushes answer 503 media_tools_missing' }),
      ffmpeg_version: Type.Optional(Type.String()),
      ffprobe_version: Type.Optional(Type.String()),
      reason: Type.Optional(Type.String({ description: 'Why they are not available, with the install hint' })),
      checked: Type.Boolean({ description: 'false while the start-up look is still running' }),
    }),
  },
  { description: 'How this server is set up, as an operator checks it: what encoders must reach, what the SSRF guard lets through, whether media tools run. No secret is in it' },
);
export type ServerSettingsView = Static<typeof ServerSettingsSchema>;
