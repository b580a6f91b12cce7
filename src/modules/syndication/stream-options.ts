/**
 * The protocol options an SRT or RIST target URL may carry (`srt://host:port?passphrase=...`):
 * exactly these, each with the values its protocol accepts. ffmpeg would take any key as an
 * AVOption of whatever has one by that name (a codec, the muxer, the protocol), so a key off
 * this list could turn a copy into an encode or make the push write files: it is refused when
 * the target is saved, and a stored target that carries one is not pushed.
 */
export const STREAM_OPTIONS = {
  srt: {
    // libsrt: the passphrase is 10 to 79 characters; the key length 0 (default), 16, 24 or 32 bytes.
    passphrase: /^[^\r\n]{10,79}$/,
    streamid: /^[^\r\n]{1,512}$/,
    pbkeylen: /^(?:0|16|24|32)$/,
    latency: /^\d{1,9}$/,
  },
  rist: {
    secret: /^[^\r\n]{1,128}$/,
    encryption: /^(?:128|256)$/,
  },
} as const satisfies Record<string, Record<string, RegExp>>;

export type StreamOptionScheme = keyof typeof STREAM_OPTIONS;

/** What a value must look like, per option, for messages (never the value itself: it may be a secret). */
const VALUE_SHAPE: Record<string, string> = {
  passphrase: '10 to 79 characters',
  streamid: '1 to 512 characters',
  pbkeylen: '0, 16, 24 or 32',
  latency: 'microseconds, a whole number',
  secret: '1 to 128 characters',
  encryption: '128 or 256',
};

const entriesOf = (query: string): [string, string][] => [...new URLSearchParams(query.replace(/^\?/, ''))];

/** The problems of a target URL's query for `scheme` (empty when every option is allowed and well formed). */
export function checkStreamOptions(scheme: StreamOptionScheme, query: string): string[] {
  const allowed: Record<string, RegExp> = STREAM_OPTIONS[scheme];
  const names = Object.keys(allowed).join(', ');
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [key, value] of entriesOf(query)) {
    const rule = Object.hasOwn(allowed, key) ? allowed[key] : undefined;
    // The key is named (it is not a secret); at most 40 characters of it, printable.
    const shown = key.replace(/[^\x20-\x7e]/g, '?').slice(0, 40);
    if (rule === undefined) problems.push(`query option "${shown}" is not an ${scheme} option this service passes on (allowed: ${names})`);
    else if (seen.has(key)) problems.push(`query option "${key}" is given twice`);
    else if (!rule.test(value)) problems.push(`query option "${key}" must be ${VALUE_SHAPE[key] ?? 'well formed'}`);
    seen.add(key);
  }
  return problems;
}

/** The allowed options of a target URL's query; throws with the first problem when one is not allowed. */
export function streamOptionsOf(scheme: StreamOptionScheme, query: string): Record<string, string> {
  const problem = checkStreamOptions(scheme, query)[0];
  if (problem !== undefined) throw new Error(problem);
  return Object.fromEntries(entriesOf(query));
}
