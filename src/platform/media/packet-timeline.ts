/**
 * The timeline of a video stream read from its packets alone (ffprobe demuxes, nothing is
 * decoded): how many packets it holds and the longest time without a frame. Packets come in
 * decode order, where a B-frame's presentation time comes after later frames' (pts 0, 30, 10,
 * 20 ...), so presentation times pass through a small reorder window before gaps are measured:
 * the window holds the last REORDER_WINDOW times and gives out the smallest once it is full.
 * H.264 and HEVC reorder at most 16 frames (their largest decoded picture buffer), so within the
 * window every time comes out in presentation order. Memory is the window, whatever the length.
 */
export const REORDER_WINDOW = 16;

/** The longest stretch without a frame: from one presentation time to the next one (seconds). */
export interface TimelineGap {
  fromS: number;
  toS: number;
  lengthS: number;
}

export interface PacketTimelineSummary {
  /** Video packets read (one per frame, or per field pair). */
  packets: number;
  /** Packets that had a time (pts, else dts). */
  timed: number;
  firstS: number | undefined;
  lastS: number | undefined;
  /** The longest gap, the one before the first frame included (from `originS`); undefined: fewer than two times. */
  largestGap: TimelineGap | undefined;
}

/** One line of `-show_entries packet=pts_time,dts_time -of csv=p=0`: `pts,dts`, each a number or `N/A`. */
export function packetTimeOf(line: string): { time: number | undefined } | undefined {
  const trimmed = line.trim();
  if (trimmed === '') return undefined;
  const [pts, dts] = trimmed.split(',');
  const number = (field: string | undefined): number | undefined => {
    if (field === undefined || field === '' || field === 'N/A') return undefined;
    const value = Number(field);
    return Number.isFinite(value) ? value : undefined;
  };
  return { time: number(pts) ?? number(dts) };
}

export class PacketTimeline {
  private packets = 0;
  private timed = 0;
  /** The last times in arrival order, kept sorted (ascending): at most REORDER_WINDOW. */
  private readonly window: number[] = [];
  private previous: number | undefined;
  private first: number | undefined;
  private last: number | undefined;
  private largest: TimelineGap | undefined;

  /** `originS`: where the file starts (its start time), so that a stream whose first frame comes much later counts as a gap too. */
  constructor(originS?: number) {
    if (originS !== undefined && Number.isFinite(originS)) this.previous = originS;
  }

  /** One line of ffprobe's CSV output. */
  line(text: string): void {
    const parsed = packetTimeOf(text);
    if (parsed) this.add(parsed.time);
  }

  /** One packet, with its presentation time (or decode time) in seconds, or none. */
  add(time: number | undefined): void {
    this.packets += 1;
    if (time === undefined) return;
    this.timed += 1;
    let at = this.window.length;
    while (at > 0 && (this.window[at - 1] ?? 0) > time) at -= 1;
    this.window.splice(at, 0, time);
    if (this.window.length > REORDER_WINDOW) this.present(this.window.shift() ?? time);
  }

  get count(): number {
    return this.packets;
  }

  /** The whole timeline, once every packet is in (what is still in the window is given out). */
  finish(): PacketTimelineSummary {
    for (const time of this.window.splice(0)) this.present(time);
    return { packets: this.packets, timed: this.timed, firstS: this.first, lastS: this.last, largestGap: this.largest };
  }

  /** The next time in presentation order. One earlier than the last (reordered deeper than the window, or a jump back) closes no gap. */
  private present(time: number): void {
    this.first ??= time;
    const previous = this.previous;
    if (previous !== undefined && time > previous) {
      const lengthS = time - previous;
      if (!this.largest || lengthS > this.largest.lengthS) this.largest = { fromS: previous, toS: time, lengthS };
    }
    if (previous === undefined || time > previous) this.previous = time;
    if (this.last === undefined || time > this.last) this.last = time;
  }
}
