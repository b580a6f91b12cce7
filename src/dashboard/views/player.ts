import Hls, { type ErrorData } from 'hls.js';
import type { DashboardApi } from '../api/client.js';
import { h, setText } from '../dom.js';
import { copyText } from '../clipboard.js';

/** What the edge said when it refused a request (problem+json), from the XHR hls.js made. */
const refusalOf = (data: ErrorData): string | undefined => {
  const xhr = data.networkDetails as XMLHttpRequest | undefined;
  if (!(xhr instanceof XMLHttpRequest) || xhr.status < 400) return undefined;
  const code = xhr.getResponseHeader('x-playback-error-code');
  let detail: string;
  try {
    detail = String((JSON.parse(xhr.responseText) as { detail?: unknown }).detail ?? '');
  } catch {
    detail = xhr.statusText;
  }
  return `the edge answered ${xhr.status}${code ? `, playback error ${code}` : ''}: ${detail}`;
};

/** Tries of a live event that has no window yet (2 s apart). */
const LIVE_TRIES = 15;

export interface PlayerOptions {
  /** What it plays: an asset (`/play/<id>.m3u8`, default) or a slicer's live event (`/play/event/<id>.m3u8`). */
  kind?: 'asset' | 'event';
  /**
   * Prefix of its elements' ids (`<prefix>-video`, `-play`, `-status`, `-ad`), for a second player
   * on the page; without it the asset view's ids (`asset-video`, `player-play`, ...).
   */
  idPrefix?: string;
}

/**
 * Plays an asset of the signed-in workspace, or a slicer's live event, with hls.js (CMCD on),
 * through a playback URL the page signs with the signed-in key: a real playback, so the
 * statistics count it.
 */
export class AssetPlayer {
  readonly element: HTMLElement;
  private readonly kind: 'asset' | 'event';
  private readonly video: HTMLVideoElement;
  private readonly status: HTMLElement;
  private readonly adInput: HTMLInputElement;
  private readonly playButton: HTMLButtonElement;
  private hls: Hls | undefined;
  private assetId: string | undefined;
  /** Bumped by every stop: a play started before it gives up. */
  private generation = 0;
  /** A live event's next try while its slicer has written no window yet. */
  private retry: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly api: DashboardApi, options: PlayerOptions = {}) {
    this.kind = options.kind ?? 'asset';
    const id = (name: string, fallback: string) => (options.idPrefix ? `${options.idPrefix}-${name}` : fallback);
    this.video = h('video', { id: id('video', 'asset-video'), controls: true, muted: true, playsinline: true, preload: 'none' });
    this.status = h('p', { class: 'muted', id: id('status', 'player-status') }, 'Press Play: the page signs a playback URL for one hour and plays it here.');
    this.adInput = h('input', { type: 'text', id: id('ad', 'player-ad'), placeholder: 'ad configuration (optional)', autocomplete: 'off' });
    this.playButton = h('button', { type: 'button', class: 'primary', id: id('play', 'player-play') }, 'Play');
    this.playButton.addEventListener('click', () => void this.play());
    // A signed playback URL (one hour) for another player or a colleague, on the clipboard.
    const copyUrl = h('button', { type: 'button', id: id('copy-url', 'player-copy-url'), title: 'Copies a playback URL signed for one hour (with the ad configuration, if any)' }, 'Copy playback URL');
    copyUrl.addEventListener('click', () => {
      const assetId = this.assetId;
      if (!assetId) return;
      const adConfig = this.kind === 'asset' ? this.adInput.value.trim() : '';
      void this.api.playbackUrl(assetId, { kind: this.kind, ...(adConfig ? { adConfig } : {}) }).then((url) => copyText(copyUrl, url), () => setText(copyUrl, 'Could not sign'));
    });
    // A live event has no ad configuration here.
    this.element = h('div', { class: 'player' }, this.video, h('div', { class: 'row' }, this.playButton, copyUrl, this.kind === 'asset' ? this.adInput : null), this.status);
  }

  /** What it shows now (an asset id, a slicer id), if anything. */
  get current(): string | undefined {
    return this.assetId;
  }

  /** Shows the player for an asset (stopping what played before). */
  load(assetId: string | undefined): void {
    if (assetId !== this.assetId) this.stop();
    this.assetId = assetId;
  }

  stop(): void {
    this.generation += 1;
    clearTimeout(this.retry);
    this.retry = undefined;
    this.hls?.destroy();
    this.hls = undefined;
    this.video.removeAttribute('src');
    this.video.load();
  }

  /**
   * Signs a playback URL for what was loaded and plays it. A live event whose slicer is live
   * but has written no window yet (the edge's 404) is tried again every 2 s, up to `LIVE_TRIES` times.
   */
  async play(tries = 1): Promise<void> {
    const assetId = this.assetId;
    if (!assetId) return;
    this.stop();
    const generation = this.generation;
    const adConfig = this.kind === 'asset' ? this.adInput.value.trim() : '';
    const url = await this.api.playbackUrl(assetId, { kind: this.kind, ...(adConfig ? { adConfig } : {}) });
    if (generation !== this.generation) return;
    this.video.dataset.playbackUrl = url;
    if (!Hls.isSupported()) {
      // Safari plays HLS itself (no CMCD then).
      this.video.src = url;
      await this.video.play().catch(() => undefined);
      return;
    }
    const hls = new Hls({ cmcd: { contentId: assetId }, enableWorker: false });
    this.hls = hls;
    hls.on(Hls.Events.MANIFEST_PARSED, (_event, data) => {
      setText(this.status, `Playing${this.kind === 'event' ? ' live' : ''}: ${data.levels.map((l) => `${l.height}p`).join(', ')}${adConfig ? `, with the ads of ${adConfig}` : ''}.`);
      void this.video.play().catch(() => undefined);
    });
    hls.on(Hls.Events.ERROR, (_event, data) => {
      if (!data.fatal) return;
      const status = (data.networkDetails as XMLHttpRequest | undefined)?.status;
      if (this.kind === 'event' && status === 404 && tries < LIVE_TRIES && generation === this.generation) {
        hls.destroy();
        setText(this.status, `Waiting for the slicer's first segments (${refusalOf(data) ?? data.details}); trying again…`);
        this.retry = setTimeout(() => void this.play(tries + 1), 2000);
        return;
      }
      setText(this.status, `Playback stopped: ${refusalOf(data) ?? data.details}`);
      this.status.classList.add('problem');
      hls.destroy();
    });
    this.status.classList.remove('problem');
    setText(this.status, 'Loading…');
    hls.loadSource(url);
    hls.attachMedia(this.video);
  }
}
