/** A media segment of a playlist ffmpeg wrote: its URI (relative to the playlist) and duration. */
export interface PlaylistSegment {
  uri: string;
  durationS: number;
}

/** The init segment and media segments a VOD media playlist lists, in order. */
export function parseMediaPlaylist(text: string): { init: string | undefined; segments: PlaylistSegment[] } {
  const segments: PlaylistSegment[] = [];
  let init: string | undefined;
  let pending: number | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#EXT-X-MAP:')) init = /URI="([^"]+)"/.exec(line)?.[1];
    else if (line.startsWith('#EXTINF:')) pending = Number.parseFloat(line.slice('#EXTINF:'.length));
    else if (line !== '' && !line.startsWith('#') && pending !== undefined) {
      segments.push({ uri: line, durationS: pending });
      pending = undefined;
    }
  }
  return { init, segments };
}

/** CODECS of each variant of a multivariant playlist, by its URI. */
export function codecsByVariant(text: string): Map<string, string> {
  const found = new Map<string, string>();
  const lines = text.split('\n').map((l) => l.trim());
  lines.forEach((line, i) => {
    if (!line.startsWith('#EXT-X-STREAM-INF:')) return;
    const codecs = /CODECS="([^"]+)"/.exec(line)?.[1];
    const uri = lines.slice(i + 1).find((l) => l !== '' && !l.startsWith('#'));
    if (codecs && uri) found.set(uri, codecs);
  });
  return found;
}
