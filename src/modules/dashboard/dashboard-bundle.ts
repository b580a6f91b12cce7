import { readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';

/** One file of the built dashboard, by its path under the dashboard root (`index.html`, `assets/app-<hash>.js`). */
export interface DashboardFile {
  name: string;
  contents: Buffer;
}

export interface DashboardBundle {
  files: DashboardFile[];
  /** Absolute paths of every source file that went into the bundle (to notice edits). */
  inputs: string[];
}

/** Where the page loads its assets from (the route serves `/dashboard/assets/<file>`). */
export const ASSET_URL_PREFIX = '/dashboard/assets/';

/**
 * Bundles the browser code in `sourceDir` (entry `main.ts`, template `index.html`) with esbuild:
 * one ES module and one stylesheet with content hashes in their names, and the page that loads
 * them. esbuild is a build tool, loaded only when a bundle is made (never by a built server).
 */
export async function bundleDashboard(sourceDir: string): Promise<DashboardBundle> {
  const esbuild = await import('esbuild');
  const outdir = join(sourceDir, '.bundle');
  const result = await esbuild.build({
    absWorkingDir: sourceDir,
    entryPoints: { app: join(sourceDir, 'main.ts') },
    tsconfig: join(sourceDir, 'tsconfig.json'),
    bundle: true,
    format: 'esm',
    // CompressionStream and WebCrypto HMAC set the floor: Chrome 80, Firefox 113, Safari 16.4.
    target: ['es2022', 'chrome100', 'firefox113', 'safari16.4'],
    minify: true,
    legalComments: 'none',
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    outdir,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const assets = result.outputFiles.map((file) => ({ name: `assets/${basename(file.path)}`, contents: Buffer.from(file.contents) }));
  const script = assets.find((a) => a.name.endsWith('.js'));
  const style = assets.find((a) => a.name.endsWith('.css'));
  if (!script || !style) throw new Error('The dashboard bundle lacks its script or stylesheet');
  const template = join(sourceDir, 'index.html');
  const page = (await readFile(template, 'utf8'))
    .replace('%SCRIPT%', `${ASSET_URL_PREFIX}${basename(script.name)}`)
    .replace('%STYLE%', `${ASSET_URL_PREFIX}${basename(style.name)}`);
  return {
    files: [{ name: 'index.html', contents: Buffer.from(page, 'utf8') }, ...assets],
    inputs: [template, ...Object.keys(result.metafile.inputs).map((input) => resolve(sourceDir, input))],
  };
}
