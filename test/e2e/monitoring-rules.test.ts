import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireServices } from '../helpers/engines.js';
import { clusterFixture, type ClusterFixture } from '../helpers/cluster.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const RULES = join(root, 'deploy/prometheus/playline-alerts.yml');
const DASHBOARD = join(root, 'deploy/grafana/playline-dashboard.json');
/** Series Prometheus makes itself, not Playline. */
const PROMETHEUS_OWN = new Set(['up']);

/** The metric names a /metrics page declares, with the series a histogram adds. */
const exposedNames = (page: string): Set<string> => {
  const names = new Set<string>();
  for (const [, name, type] of page.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name as string);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
};

/** The metric names a PromQL-bearing text uses: Playline's, and the few Prometheus series named in PROMETHEUS_OWN. */
const usedNames = (text: string): Set<string> => new Set([...text.matchAll(/\b(playline_[a-z0-9_]+)\b/g)].map((m) => m[1] as string));

describe('the Prometheus rules and the Grafana dashboard in deploy/', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'playline-metrics-'));
  let embedded: ServerProcess;
  let fx: ClusterFixture;
  let exposed: Set<string>;
  before(async () => {
    // The embedded server and a cluster instance (some metrics exist in cluster mode only: held
    // batches) start side by side; the names either serves count.
    const [embeddedNames, clusterNames] = await Promise.all([
      (async () => {
        embedded = await startServerProcess({ PLAYLINE_DATA_DIR: dataDir });
        await fetch(`${embedded.url}/healthz`);
        return exposedNames(await (await fetch(`${embedded.url}/metrics`)).text());
      })(),
      (async () => {
        fx = await clusterFixture();
        if (fx.skip) return new Set<string>();
        const instance = await fx.start();
        return exposedNames(await (await fetch(`${instance.url}/metrics`)).text());
      })(),
    ]);
    exposed = new Set([...embeddedNames, ...clusterNames]);
  });
  after(async () => {
    await embedded?.stop();
    await fx?.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('use only metrics a running server serves', (t) => {
    if (fx.skip) t.diagnostic(`cluster-only metrics not checked: ${fx.skip}`);
    const rules = readFileSync(RULES, 'utf8');
    const dashboard = readFileSync(DASHBOARD, 'utf8');
    const exprs = (JSON.parse(dashboard) as { panels: { targets?: { expr: string }[] }[] }).panels.flatMap((p) => (p.targets ?? []).map((q) => q.expr));
    const used = new Set([...usedNames(rules), ...usedNames(exprs.join('\n'))]);
    assert.ok(used.size >= 20, `only ${used.size} metrics used`);
    const clusterOnly = fx.skip ? ['playline_cluster_held_batches'] : [];
    const unknown = [...used].filter((name) => !exposed.has(name) && !clusterOnly.includes(name));
    assert.deepEqual(unknown, [], `metrics used but not served: ${unknown.join(', ')}`);
    assert.match(rules, /\bup\{job="playline"\}/);
    for (const name of PROMETHEUS_OWN) assert.equal(exposed.has(name), false);
    assert.ok(exprs.length >= 20);
  });

  test('promtool check rules accepts the alert rules', (t) => {
    const found = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
    if (found.error) {
      assert.equal(requireServices, false, 'PLAYLINE_REQUIRE_SERVICES=1 but promtool is missing (apt-get install prometheus)');
      t.skip('promtool not found (apt-get install prometheus)');
      return;
    }
    const checked = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    assert.equal(checked.status, 0, `${checked.stdout}${checked.stderr}`);
    assert.match(checked.stdout, /SUCCESS: 13 rules found/);
  });
});
