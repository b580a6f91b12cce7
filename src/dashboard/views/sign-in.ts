import { ApiProblem, DashboardApi } from '../api/client.js';
import { V4Signer, canSign } from '../api/sign.js';
import type { Workspace } from '../api/types.js';
import { h, setText } from '../dom.js';
import { describeFailure } from '../format.js';
import type { Credentials } from '../session.js';

/** Sign-in failures in words a person can act on, with the server's own detail kept. */
const reasons: Record<string, string> = {
  unknown_owner: 'There is no workspace with this id. Check the Workspace ID (printed with the bootstrap key, or `playline workspaces list`).',
  invalid_signature: 'The API key does not match this workspace. Check the key (`playline keys create --owner <id>` makes a new one).',
  key_revoked: 'This API key has been revoked. Create a new one with `playline keys create --owner <id>`.',
  key_kind_not_allowed: 'This is an ingest key, which may only submit events. Sign in with an API key.',
  timestamp_out_of_range: 'This computer\'s clock is too far from the server\'s. Correct the clock and try again.',
};

export function signInFailure(err: unknown): string {
  const reason = err instanceof ApiProblem ? reasons[err.code] : undefined;
  return reason ? `Sign-in failed: ${reason} (${describeFailure(err)})` : `Sign-in failed: ${describeFailure(err)}`;
}

/** Checks a workspace id and key by calling GET /api/v4/workspace signed with them. */
export async function verify(credentials: Credentials): Promise<{ api: DashboardApi; workspace: Workspace }> {
  const api = new DashboardApi(new V4Signer(credentials.owner, credentials.apiKey));
  return { api, workspace: await api.workspace() };
}

/**
 * The sign-in form. Its inputs have no `name`, the form posts nowhere (and the page's CSP says
 * `form-action 'none'`), so the key can never travel in a URL; it is kept in sessionStorage only.
 */
export function signInForm(onSignedIn: (credentials: Credentials, api: DashboardApi, workspace: Workspace) => void, message?: string): HTMLElement {
  const owner = h('input', { id: 'signin-owner', type: 'text', autocomplete: 'username', spellcheck: 'false', required: true });
  const key = h('input', { id: 'signin-key', type: 'password', autocomplete: 'off', required: true });
  const submit = h('button', { type: 'submit', class: 'primary', id: 'signin-submit' }, 'Sign in');
  const error = h('p', { id: 'signin-error', class: 'problem', role: 'alert', hidden: message === undefined }, message ?? '');
  const form = h(
    'form',
    { id: 'signin', class: 'signin panel', method: 'post', action: '#', novalidate: true },
    h('h1', {}, 'Playline dashboard'),
    h('p', { class: 'muted' }, 'Sign in with a workspace id and one of its API keys. The key stays in this browser tab (sessionStorage) and signs each API call here; closing the tab forgets it.'),
    h('label', { for: 'signin-owner' }, 'Workspace ID'),
    owner,
    h('label', { for: 'signin-key' }, 'API key'),
    key,
    submit,
    error,
  );

  const fail = (text: string) => {
    setText(error, text);
    error.hidden = false;
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const credentials = { owner: owner.value.trim(), apiKey: key.value.trim() };
    if (!credentials.owner || !credentials.apiKey) return fail('Sign-in failed: enter both the Workspace ID and the API key.');
    if (!canSign()) return fail('Sign-in failed: this page needs a secure context (https, or http on localhost/127.0.0.1) for WebCrypto signing.');
    submit.disabled = true;
    setText(submit, 'Signing in…');
    error.hidden = true;
    verify(credentials).then(
      ({ api, workspace }) => onSignedIn(credentials, api, workspace),
      (err: unknown) => {
        submit.disabled = false;
        setText(submit, 'Sign in');
        fail(signInFailure(err));
        key.select();
      },
    );
  });
  queueMicrotask(() => (owner.value ? key : owner).focus());
  return form;
}
