import { h, setText } from '../dom.js';
import { copyText } from '../clipboard.js';
import { ingestParts, KEY_MASK } from '../ingest-parts.js';

interface Drawn {
  protocol: string;
  url: string;
  revealed: boolean;
  server: HTMLElement;
  key: HTMLElement;
  keyRow: HTMLElement;
  reveal: HTMLButtonElement;
}

/**
 * A slicer's ingest URL in a table cell as encoders want it: the server, and the stream key
 * masked, with Show and Copy buttons (Mux and Cloudflare Stream do the same). The key is never in
 * the page's text until Show is clicked, and it is masked again when the URL changes (a rotation).
 */
export class IngestCell {
  private readonly drawn = new WeakMap<HTMLTableCellElement, Drawn>();

  render(protocol: string, url: string | null, cell: HTMLTableCellElement): void {
    if (url === null) {
      if (cell.textContent !== '—' || cell.childElementCount > 0) {
        cell.replaceChildren('—');
        this.drawn.delete(cell);
      }
      return;
    }
    let d = this.drawn.get(cell);
    if (!d) d = this.draw(cell);
    d.protocol = protocol;
    if (d.url !== url) {
      d.url = url;
      d.revealed = false;
    }
    const parts = ingestParts(protocol, url);
    setText(d.server, parts.server);
    d.keyRow.hidden = parts.key === null;
    setText(d.key, d.revealed ? (parts.key ?? '') : KEY_MASK);
    setText(d.reveal, d.revealed ? 'Hide' : 'Show');
    d.reveal.setAttribute('aria-pressed', String(d.revealed));
  }

  private draw(cell: HTMLTableCellElement): Drawn {
    const server = h('code', { class: 'ingest-server' });
    const key = h('code', { class: 'ingest-key' });
    const reveal = h('button', { type: 'button', class: 'link ingest-reveal', title: 'Show the stream key' }, 'Show');
    const copyServer = h('button', { type: 'button', class: 'link ingest-copy-server', title: 'Copy the server (OBS: Server)' }, 'Copy');
    const copyKey = h('button', { type: 'button', class: 'link ingest-copy-key', title: 'Copy the stream key (OBS: Stream Key)' }, 'Copy');
    const copyUrl = h('button', { type: 'button', class: 'link ingest-copy-url', title: 'Copy the whole ingest URL, key included' }, 'Copy URL');
    const keyRow = h('div', { class: 'ingest-row' }, h('span', { class: 'ingest-label' }, 'Key'), key, reveal, copyKey);
    const d: Drawn = { protocol: '', url: '', revealed: false, server, key, keyRow, reveal };
    reveal.addEventListener('click', () => {
      d.revealed = !d.revealed;
      const parts = ingestParts(d.protocol, d.url);
      setText(key, d.revealed ? (parts.key ?? '') : KEY_MASK);
      setText(reveal, d.revealed ? 'Hide' : 'Show');
      reveal.setAttribute('aria-pressed', String(d.revealed));
    });
    copyServer.addEventListener('click', () => void copyText(copyServer, ingestParts(d.protocol, d.url).server));
    copyKey.addEventListener('click', () => void copyText(copyKey, ingestParts(d.protocol, d.url).key ?? ''));
    copyUrl.addEventListener('click', () => void copyText(copyUrl, d.url));
    cell.replaceChildren(
      h('div', { class: 'ingest' },
        h('div', { class: 'ingest-row' }, h('span', { class: 'ingest-label' }, 'Server'), server, copyServer),
        keyRow,
        h('div', { class: 'ingest-row' }, copyUrl),
      ),
    );
    this.drawn.set(cell, d);
    return d;
  }
}
