// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * One way out of the process (issue 42, acceptance 3): a connection to anywhere a user named is
 * opened only by the outbound layer (src/platform/net/outbound.ts), whose SSRF guard and DNS
 * pinning are inside. Elsewhere in the server these fail lint: net/tls connect, http(s) request,
 * undici, fetch, a UDP socket, a dynamic import of those, and an ffmpeg URL whose host is computed
 * (`rtmp://${host}`…). Exceptions are listed here, each with its reason.
 */
const pino = { name: 'pino', allowTypeImports: true, message: 'Take the runtime logger (a log.child({ module }) in your deps), not a new pino root.' };
const viaOutbound = 'Connections out go through the outbound layer (src/platform/net/outbound.ts: admit, then connect/request/dispatcher/udp/ffmpegUrl), which guards and pins them.';
const connectingImports = [
  ...['net', 'node:net'].map((name) => ({ name, importNames: ['connect', 'createConnection', 'Socket'], allowTypeImports: true, message: viaOutbound })),
  ...['tls', 'node:tls'].map((name) => ({ name, importNames: ['connect', 'TLSSocket'], allowTypeImports: true, message: viaOutbound })),
  ...['http', 'node:http', 'https', 'node:https'].map((name) => ({ name, importNames: ['request', 'get', 'Agent', 'ClientRequest'], allowTypeImports: true, message: viaOutbound })),
  ...['http2', 'node:http2'].map((name) => ({ name, importNames: ['connect'], allowTypeImports: true, message: viaOutbound })),
  { name: 'undici', allowTypeImports: true, message: viaOutbound },
];
const udpImports = ['dgram', 'node:dgram'].map((name) => ({ name, importNames: ['createSocket', 'Socket'], allowTypeImports: true, message: `${viaOutbound} (outbound.udp)` }));
const exportDefault = { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' };
const connectingSyntax = [
  { selector: "ImportExpression[source.value=/^(node:)?(net|tls|dgram|http|https|http2|undici)$/]", message: viaOutbound },
  { selector: "CallExpression[callee.name='fetch'], CallExpression[callee.object.name='globalThis'][callee.property.name='fetch']", message: viaOutbound },
];
const ffmpegUrlSyntax = { selector: 'TemplateLiteral[quasis.0.value.raw=/^(rtmps?|srt|rist|zixi|udp|tcp):\\/\\/$/]', message: `An ffmpeg URL with a computed host: ${viaOutbound}` };
const outboundRules = ({ udp = true, ffmpegUrls = true, logger = false } = {}) => ({
  // This rule's options replace the pino block's for the same files, so they carry its path too.
  '@typescript-eslint/no-restricted-imports': ['error', { paths: [...(logger ? [] : [pino]), ...connectingImports, ...(udp ? udpImports : [])] }],
  'no-restricted-globals': ['error', { name: 'fetch', message: viaOutbound }, { name: 'WebSocket', message: viaOutbound }],
  'no-restricted-syntax': ['error', exportDefault, ...connectingSyntax, ...(ffmpegUrls ? [ffmpegUrlSyntax] : [])],
});
/** Named so that src/platform/net/outbound-lint.test.ts lints attempts with exactly these blocks. */
export const outboundRestrictions = [
  {
    name: 'playline/outbound-only',
    files: ['src/**/*.ts'],
    ignores: [
      // The outbound layer itself.
      'src/platform/net/outbound.ts',
      // Tests and their loopback-only helpers (receivers, fake servers) stand where the outside world is.
      'src/**/*.test.ts', 'src/**/*.test-support.ts', 'src/**/testing/**',
      // Clients of a Playline server the operator names (SDK, CLI, dashboard in the browser, the
      // traffic simulator): they are not the server process opening a connection a user asked for.
      'src/client/**', 'src/cli/**', 'src/dashboard/**', 'src/simulator/**',
    ],
    rules: outboundRules(),
  },
  // Listed exceptions, each only for what it needs.
  {
    // The one pino root (the pino block above exempts it too).
    name: 'playline/outbound-exception-logger',
    files: ['src/platform/logger.ts'],
    rules: outboundRules({ logger: true }),
  },
  {
    // Ingest addresses this service listens at (shown to encoders), not destinations.
    name: 'playline/outbound-exception-ingest-urls',
    files: ['src/modules/managed-slicers/provisioner.ts'],
    rules: outboundRules({ ffmpegUrls: false }),
  },
  {
    // The same ingest addresses, and a free-port probe that binds a UDP socket and sends nothing.
    name: 'playline/outbound-exception-ingest-ports',
    files: ['src/modules/managed-slicers/ingest-endpoint.ts'],
    rules: outboundRules({ udp: false, ffmpegUrls: false }),
  },
  {
    // RIST's ingest front: it listens on the slicer's port, answers only the sender it admitted (on the
    // socket that sender reached), and forwards to ffmpeg on loopback; slicer-source.ts probes a free loopback port.
    name: 'playline/outbound-exception-rist-front',
    files: ['src/modules/managed-slicers/rist-ingest-front.ts', 'src/modules/managed-slicers/slicer-source.ts'],
    rules: outboundRules({ udp: false }),
  },
  {
    // The SRT push relay's loopback side (ffmpeg sends to it); its destination socket comes from outbound.udp.
    name: 'playline/outbound-exception-loopback-udp',
    files: ['src/modules/syndication/udp-relay.ts'],
    rules: outboundRules({ udp: false }),
  },
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'bench/out/**', 'test-artifacts/**', 'src/dashboard/vendor/**', 'dist-dashboard/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Type-aware rules: the project service gives each file the types of its own tsconfig.
    languageOptions: { parserOptions: { projectService: { allowDefaultProject: ['eslint.config.js'] }, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // node:test's test() and describe() return promises the runner awaits itself.
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] }] }],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: false }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      // A module adds its tables to the database type with `interface Database extends XTables {}`.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
    },
  },
  {
    // One logger: the runtime builds the only pino root (src/platform/logger.ts); modules take a child of it.
    files: ['src/**/*.ts'],
    ignores: ['src/platform/logger.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [{ name: 'pino', allowTypeImports: true, message: 'Take the runtime logger (a log.child({ module }) in your deps), not a new pino root.' }] }],
      'no-restricted-properties': ['error', { object: 'process', property: 'emitWarning', message: 'Log through the runtime logger.' }],
    },
  },
  ...outboundRestrictions,
  {
    // The traffic simulator is a client of the server: the SDK, public types, and the media layout it writes into.
    files: ['src/simulator/**/*.ts'],
    ignores: ['src/simulator/**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [{ name: 'pino', allowTypeImports: true, message: 'Take the runtime logger (a log.child({ module }) in your deps), not a new pino root.' }],
        patterns: [{
          group: ['**/modules/**', '**/runtime.js', '**/app.js', '**/server.js', '**/platform/*', '!**/platform/media'],
          allowTypeImports: true,
          message: 'The simulator reaches the server only through the SDK (src/client) and public types; it writes media through src/platform/media.',
        }],
      }],
    },
  },
  {
    files: ['eslint.config.js'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
