import type { ServerSettings } from '../api/types.js';
import { h, setText } from '../dom.js';
import { isMissingRoute } from '../format.js';
import { Poller } from '../poller.js';
import { copyText } from '../clipboard.js';
import { ProblemLine, section } from './parts.js';
import type { View, ViewContext } from './view.js';

/** A definition list row: the label, the value, and what it means for the operator. */
const row = (label: string, value: HTMLElement, hint: string): HTMLElement[] => [h('dt', {}, label), h('dd', {}, value, h('span', { class: 'hint' }, hint))];

/**
 * The server's settings as an operator checks them during a shift: where encoders must send
 * (public host, port range), what the SSRF guard lets through, whether ffmpeg runs. Read-only:
 * they are set with PLAYLINE_* settings on the server (README "Settings").
 */
export function settingsView(ctx: ViewContext): View {
  const problem = new ProblemLine();
  const value = (id: string) => h('code', { id });
  const version = value('settings-version');
  const mode = value('settings-mode');
  const host = value('settings-public-host');
  const ports = value('settings-ports');
  const provisioner = value('settings-provisioner');
  const dvr = value('settings-dvr');
  const grace = value('settings-grace');
  const allow = h('span', { id: 'settings-allowlist' });
  const tools = h('span', { id: 'settings-media-tools' });
  const copyHost = h('button', { type: 'button', class: 'link', id: 'settings-copy-host' }, 'Copy');
  copyHost.addEventListener('click', () => void copyText(copyHost, host.textContent ?? ''));

  const list = h('dl', { class: 'settings', id: 'settings' },
    ...row('Version', version, ''),
    ...row('Mode', mode, 'embedded: one process on SQLite; cluster: instances on PostgreSQL and Redis.'),
    ...row('Public host', h('span', {}, host, copyHost), 'Named in every ingest URL: encoders must reach this server there (PLAYLINE_PUBLIC_HOST).'),
    ...row('Ingest ports', ports, 'SRT, RTMP and RIST listeners take a port of this range: open it in the firewall (PLAYLINE_SLICER_PORTS).'),
    ...row('Slicers', provisioner, 'ffmpeg runs real slicers; simulated ones receive no stream (PLAYLINE_SLICER_PROVISIONER).'),
    ...row('Largest DVR window', dvr, 'PLAYLINE_LIVE_DVR_WINDOW_S.'),
    ...row('Encoder reconnect grace', grace, 'An encoder back within it continues the same event (PLAYLINE_LIVE_RECONNECT_GRACE_MS).'),
    ...row('Outbound allow-list', allow, 'Loopback or private addresses callbacks, webhooks and pushes may still reach (PLAYLINE_OUTBOUND_ALLOWLIST); the rest of those ranges are refused.'),
    ...row('Media tools', tools, 'ffmpeg and ffprobe: without them uploads, slicers and pushes answer 503 media_tools_missing.'),
  );
  const element = h('div', { class: 'view', id: 'view-settings' },
    section('Server settings', h('p', { class: 'muted' }, 'Read-only: set on the server with PLAYLINE_* settings or command-line flags, and shown here as this server runs.'), problem.element, list),
  );

  const show = (s: ServerSettings): void => {
    setText(version, s.version);
    setText(mode, s.mode);
    setText(host, s.ingest.public_host);
    setText(ports, s.ingest.port_range);
    setText(provisioner, s.ingest.slicer_provisioner);
    setText(dvr, s.ingest.dvr_window_max_s === 0 ? 'off (the short live window)' : `${s.ingest.dvr_window_max_s} s`);
    setText(grace, `${s.ingest.reconnect_grace_ms} ms`);
    setText(allow, s.outbound_allowlist.length === 0 ? 'empty: public addresses only' : s.outbound_allowlist.join(', '));
    const t = s.media_tools;
    setText(tools, !t.checked ? 'being looked for…' : t.available ? `ffmpeg ${t.ffmpeg_version ?? '?'}, ffprobe ${t.ffprobe_version ?? '?'}` : `not available: ${t.reason ?? 'unknown reason'}`);
    tools.className = t.available ? 'badge status-active' : 'badge status-error';
  };

  const poller = new Poller(async () => {
    try {
      show(await ctx.api.serverSettings());
      problem.clear();
    } catch (err) {
      problem.show(err, isMissingRoute(err) ? 'This server does not report its settings: ' : 'Could not load the settings: ');
    }
  }, Math.max(ctx.intervalMs, 10_000));

  return { element, show: () => poller.start(), hide: () => poller.stop() };
}
