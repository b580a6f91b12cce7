import { ApiProblem } from './api/client.js';
import type { DashboardApi } from './api/client.js';
import type { Workspace } from './api/types.js';
import { h } from './dom.js';
import { describeFailure } from './format.js';
import { LiveStats } from './live-stats.js';
import { clearCredentials, loadCredentials, saveCredentials } from './session.js';
import { assetView } from './views/asset.js';
import { errorReportingView } from './views/error-reporting.js';
import { keysView } from './views/keys.js';
import { libraryView } from './views/library.js';
import { sharesView } from './views/shares.js';
import { webhooksView } from './views/webhooks.js';
import { usageView } from './views/usage.js';
import { settingsView } from './views/settings.js';
import { overviewView } from './views/overview.js';
import { publishingView } from './views/publishing.js';
import { signInFailure, signInForm, verify } from './views/sign-in.js';
import { slicersView } from './views/slicers.js';
import type { View } from './views/view.js';

/** Live statistics refresh this often; other views every 3 s. */
const LIVE_INTERVAL_MS = 1000;

const routes = [
  { hash: '#overview', label: 'Overview' },
  { hash: '#library', label: 'Library' },
  { hash: '#error-reporting', label: 'Error Reporting' },
  { hash: '#publishing', label: 'Publishing' },
  { hash: '#slicers', label: 'Slicers' },
  { hash: '#webhooks', label: 'Webhooks' },
  { hash: '#keys', label: 'API keys' },
  { hash: '#shares', label: 'Sharing' },
  { hash: '#usage', label: 'Usage' },
  { hash: '#settings', label: 'Settings' },
] as const;

/** The signed-in application: header, navigation, one view at a time chosen by the URL hash. */
function signedIn(root: HTMLElement, api: DashboardApi, workspace: Workspace, signOut: (message?: string) => void): () => void {
  const live = new LiveStats(api, LIVE_INTERVAL_MS);
  const ctx = { api, live, intervalMs: LIVE_INTERVAL_MS };
  const views: Record<string, View> = {
    '#overview': overviewView(ctx),
    '#asset': assetView(ctx),
    '#library': libraryView(ctx),
    '#error-reporting': errorReportingView(ctx),
    '#publishing': publishingView(ctx),
    '#slicers': slicersView(ctx),
    '#webhooks': webhooksView(ctx),
    '#keys': keysView(ctx),
    '#shares': sharesView(ctx),
    '#usage': usageView(ctx),
    '#settings': settingsView(ctx),
  };
  const links = routes.map((r) => h('a', { href: r.hash, 'data-route': r.hash }, r.label));
  const signOutButton = h('button', { type: 'button', id: 'signout' }, 'Sign out');
  signOutButton.addEventListener('click', () => signOut());
  const main = h('main', {}, ...Object.values(views).map((v) => v.element));
  root.replaceChildren(
    h('header', { class: 'top' },
      h('strong', { class: 'brand' }, 'Playline'),
      h('nav', {}, ...links),
      h('span', { class: 'who', id: 'workspace' }, `${workspace.name} · `, h('code', {}, workspace.id)),
      signOutButton,
    ),
    main,
  );

  let current: View | undefined;
  const route = (): void => {
    const [hash = '#overview', param] = location.hash.split('/', 2);
    const name = hash in views && (hash !== '#asset' || param) ? hash : '#overview';
    const next = views[name] as View;
    if (current && current !== next) current.hide();
    for (const v of Object.values(views)) v.element.hidden = v !== next;
    for (const link of links) link.toggleAttribute('aria-current', link.dataset.route === (name === '#asset' ? '#overview' : name));
    current = next;
    next.show(param === undefined ? undefined : decodeURIComponent(param));
  };
  window.addEventListener('hashchange', route);
  // A key revoked (or a workspace removed) while the page is open ends the session.
  const unsubscribe = live.subscribe((s) => {
    if (s.summaryError instanceof ApiProblem && s.summaryError.status === 401) signOut(`Signed out: ${describeFailure(s.summaryError)}`);
  });
  live.start();
  route();
  return () => {
    window.removeEventListener('hashchange', route);
    unsubscribe();
    current?.hide();
    live.stop();
  };
}

/** Starts the dashboard in `root`: resumes this tab's session or asks to sign in. */
export function startDashboard(root: HTMLElement): void {
  let teardown: (() => void) | undefined;

  const signOut = (message?: string): void => {
    teardown?.();
    teardown = undefined;
    clearCredentials();
    showSignIn(message);
  };

  const enter = (api: DashboardApi, workspace: Workspace): void => {
    teardown = signedIn(root, api, workspace, signOut);
  };

  const showSignIn = (message?: string): void => {
    root.replaceChildren(
      signInForm((credentials, api, workspace) => {
        saveCredentials(credentials);
        enter(api, workspace);
      }, message),
    );
  };

  const saved = loadCredentials();
  if (!saved) return showSignIn();
  root.replaceChildren(h('p', { class: 'muted loading' }, 'Signing in…'));
  verify(saved).then(
    ({ api, workspace }) => enter(api, workspace),
    (err: unknown) => {
      if (!(err instanceof ApiProblem && err.status === 401)) return showSignIn(signInFailure(err));
      signOut(signInFailure(err));
    },
  );
}
