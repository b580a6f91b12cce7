/**
 * The signed-in workspace and key live in this tab's sessionStorage only: gone when the tab
 * closes, never in localStorage, cookies or the URL (so never in history, logs or referrers).
 */
export interface Credentials {
  owner: string;
  apiKey: string;
}

const KEY = 'playline.dashboard.credentials';

export function loadCredentials(): Credentials | null {
  const raw = sessionStorage.getItem(KEY);
  if (!raw) return null;
  try {
    const parsed = JSON.parse(raw) as Partial<Credentials>;
    if (typeof parsed.owner === 'string' && typeof parsed.apiKey === 'string') return { owner: parsed.owner, apiKey: parsed.apiKey };
  } catch {
    // Unreadable: treat as signed out.
  }
  sessionStorage.removeItem(KEY);
  return null;
}

export const saveCredentials = (credentials: Credentials): void => sessionStorage.setItem(KEY, JSON.stringify(credentials));

/** Signing out forgets the key and every setting of the page (the history range...). */
export const clearCredentials = (): void => {
  for (const name of Object.keys(sessionStorage)) if (name.startsWith('playline.dashboard.')) sessionStorage.removeItem(name);
};
