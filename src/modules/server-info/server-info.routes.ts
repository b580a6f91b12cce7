import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import type { MediaTools } from '../../platform/media/media-tools.js';
import type { ModuleParts } from '../../platform/module-parts.js';
import { ServerSettingsSchema, type ServerSettingsView } from './server-info.schema.js';

/** What the settings page shows, read when asked (media tools are found after start). */
export interface ServerInfoDeps {
  version: string;
  mode: 'embedded' | 'cluster';
  publicHost: string;
  portRange: string;
  slicerProvisioner: string;
  dvrWindowMaxS: number;
  reconnectGraceMs: number;
  outboundAllowlist: string;
  mediaTools: () => MediaTools | undefined;
}

export const serverSettingsOf = (deps: ServerInfoDeps): ServerSettingsView => {
  const tools = deps.mediaTools();
  return {
    '@id': '/api/v4/server',
    '@type': 'ServerSettings',
    version: deps.version,
    mode: deps.mode,
    ingest: {
      public_host: deps.publicHost,
      port_range: deps.portRange.replace(/\s+/g, ''),
      slicer_provisioner: deps.slicerProvisioner,
      dvr_window_max_s: deps.dvrWindowMaxS,
      reconnect_grace_ms: deps.reconnectGraceMs,
    },
    outbound_allowlist: deps.outboundAllowlist.split(',').map((entry) => entry.trim()).filter((entry) => entry !== ''),
    media_tools:
      tools === undefined ? { available: false, checked: false }
      : tools.available ? { available: true, ffmpeg_version: tools.ffmpegVersion, ffprobe_version: tools.ffprobeVersion, checked: true }
      : { available: false, reason: tools.reason, checked: true },
  };
};

/** `GET /server`: the server's settings as an operator checks them (the dashboard's Settings view). */
export function serverInfoParts(deps: ServerInfoDeps): ModuleParts {
  return {
    name: 'server-info',
    apiRoutes: async (api: App) => {
      api.get('/server', {
        config: { auth: 'api' },
        schema: {
          tags: ['server'],
          summary: 'How this server is set up: ingest host and ports, the outbound allow-list, media tools',
          description: 'Read-only; any workspace may read it. It holds no secret (keys, passwords and the database URL are never in it).',
          response: { 200: ServerSettingsSchema, ...problemResponses(401) },
        },
      }, async (): Promise<ServerSettingsView> => serverSettingsOf(deps));
    },
  };
}
