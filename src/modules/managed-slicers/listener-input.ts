import type { Readable } from 'node:stream';
import { secretFifo } from '../../platform/media/secret-fifo.js';

/** How a slicer's ffmpeg reads its source for one run: the input arguments, and what to release once the run is over. */
export interface SourceInput {
  args: readonly string[];
  /** What ffmpeg reads on stdin (an RTMP publisher's FLV). */
  stdin?: Readable;
  close?: () => Promise<void>;
}

/** The listener protocols whose key ffmpeg enforces itself (RTMP's is checked by the ingest front). */
export type KeyedListenProtocol = 'srt' | 'rist';

const urlHost = (host: string): string => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

/**
 * The SRT or RIST listener of a slicer, as a concat script handed to ffmpeg through a named pipe:
 * - the stream key becomes a protocol option of the listener (SRT passphrase, AES-128; RIST
 *   secret, AES-128) without ever being on ffmpeg's command line, so a sender without it is
 *   refused in the protocol's own handshake, before any media, and cannot take the listener;
 * - the container is forced: only the MPEG-TS demuxer may read what arrives
 *   (`format_whitelist`), so a playlist or an SDP sent as "the stream" is never probed as one;
 * - the only protocols ffmpeg may open are the listener's own and the pipe the script comes
 *   through (`-protocol_whitelist`, inherited by the listener), so nothing a sender sends can
 *   make ffmpeg connect anywhere.
 */
export async function keyedListenerInput(protocol: KeyedListenProtocol, bindHost: string, port: number, streamKey: string): Promise<SourceInput> {
  if (!/^[A-Za-z0-9_-]{16,79}$/.test(streamKey)) throw new Error('a stream key is 16 to 79 characters of A-Z a-z 0-9 _ -');
  const lines =
    protocol === 'srt'
      ? [`file 'srt://${urlHost(bindHost)}:${port}?mode=listener'`, `option passphrase ${streamKey}`, 'option pbkeylen 16']
      : [`file 'rist://@${urlHost(bindHost)}:${port}'`, `option secret ${streamKey}`, 'option encryption 128'];
  const script = await secretFifo(['ffconcat version 1.0', ...lines, 'option format_whitelist mpegts', ''].join('\n'));
  return {
    args: ['-protocol_whitelist', `file,${protocol},udp`, '-f', 'concat', '-safe', '0', '-i', script.path],
    close: () => script.close(),
  };
}

/**
 * An `hls` slicer's input: the playlist the encoder pushed (validated on arrival to name only
 * files of its folder), read as HLS from local files only.
 */
export const pushedPlaylistInput = (playlist: string): SourceInput => ({
  args: ['-protocol_whitelist', 'file', '-f', 'hls', '-i', playlist],
});
