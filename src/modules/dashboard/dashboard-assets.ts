import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../../platform/errors.js';
import type { DashboardFile } from './dashboard-bundle.js';

/** A file ready to serve: its bytes (and gzip form when that is smaller), validator and type. */
export interface DashboardAsset {
  body: Buffer;
  gzip: Buffer | null;
  etag: string;
  contentType: string;
  /** Content-hashed name: cacheable for a year. */
  immutable: boolean;
}

/** Where the dashboard's files come from: a build on disk, or a fresh build of the sources. */
export interface DashboardAssets {
  /** `index.html` or `assets/<file>`; undefined when there is no such file. */
  get(name: string): Promise<DashboardAsset | undefined>;
}

/** The manifest `npm run build` writes beside the files it lists. */
export const BUILD_MANIFEST = 'build.json';

const types: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  map: 'application/json; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  woff2: 'font/woff2',
};

export function toAsset(file: DashboardFile): DashboardAsset {
  const extension = file.name.split('.').pop() ?? '';
  const compressed = gzipSync(file.contents, { level: 9 });
  return {
    body: file.contents,
    gzip: compressed.length < file.contents.length ? compressed : null,
    etag: `"${createHash('sha256').update(file.contents).digest('base64url').slice(0, 27)}"`,
    contentType: types[extension] ?? 'application/octet-stream',
    immutable: file.name.startsWith('assets/'),
  };
}

const assetMap = (files: DashboardFile[]) => new Map(files.map((f) => [f.name, toAsset(f)]));

/** Files written by `npm run build` (listed in build.json), read once. */
export function prebuiltAssets(dir: string): DashboardAssets {
  let files: Map<string, DashboardAsset> | undefined;
  return {
    async get(name) {
      if (!files) {
        const manifest = JSON.parse(readFileSync(join(dir, BUILD_MANIFEST), 'utf8')) as { files: string[] };
        files = assetMap(manifest.files.map((f) => ({ name: f, contents: readFileSync(join(dir, f)) })));
      }
      return files.get(name);
    },
  };
}

/**
 * Builds the sources on first request and again when a source changed since (checked when the
 * page itself is requested, at most once a second), so `npm run dev` and tests always serve
 * the current code without a build step. Earlier builds' assets stay available to open pages.
 */
export function liveBuildAssets(sourceDir: string, log?: FastifyBaseLogger): DashboardAssets {
  const files = new Map<string, DashboardAsset>();
  let built: { at: number; inputs: string[] } | undefined;
  let building: Promise<void> | undefined;
  let checkedAt = 0;

  const changed = (): boolean => {
    if (!built) return true;
    if (Date.now() - checkedAt < 1000) return false;
    checkedAt = Date.now();
    const at = built.at;
    return built.inputs.some((input) => !existsSync(input) || statSync(input).mtimeMs > at);
  };

  const build = async (): Promise<void> => {
    const startedAt = Date.now();
    const { bundleDashboard } = await import('./dashboard-bundle.js');
    try {
      const bundle = await bundleDashboard(sourceDir);
      for (const [name, asset] of assetMap(bundle.files)) files.set(name, asset);
      built = { at: startedAt, inputs: bundle.inputs };
      log?.info({ ms: Date.now() - startedAt }, 'dashboard built from source');
    } catch (err) {
      log?.error({ err }, 'dashboard build failed');
      throw new AppError('service_unavailable', 'The dashboard failed to build from source; the server log says why', { cause: err });
    }
  };

  return {
    async get(name) {
      if (name === 'index.html' || !built) {
        if (!building && changed()) building = build().finally(() => (building = undefined));
        if (building) await building;
      }
      return files.get(name);
    },
  };
}

/** A server without a dashboard build answers 503 saying how to make one. */
export const missingAssets: DashboardAssets = {
  async get() {
    throw new AppError('service_unavailable', 'The dashboard is not built: run `npm run build` (it bundles src/dashboard into dist/dashboard)');
  },
};

/**
 * The dashboard beside this module: `dist/dashboard` (with build.json) when running the built
 * server, the `src/dashboard` sources (built on demand) when running from source.
 */
export function defaultDashboardAssets(log?: FastifyBaseLogger): DashboardAssets {
  const dir = fileURLToPath(new URL('../../dashboard/', import.meta.url));
  if (existsSync(join(dir, BUILD_MANIFEST))) return prebuiltAssets(dir);
  if (existsSync(join(dir, 'main.ts'))) return liveBuildAssets(dir, log);
  return missingAssets;
}
