import { fetchOrExplain } from './server-reach.js';

/** Deletes workspaces through the admin API (`simulate --cleanup`); the ids deleted. */
export async function deleteWorkspaces(baseUrl: string, adminToken: string, ids: readonly string[]): Promise<string[]> {
  const deleted: string[] = [];
  for (const id of ids) {
    const url = `${baseUrl}/api/v4/admin/workspaces/${encodeURIComponent(id)}`;
    const response = await fetchOrExplain(url, { method: 'DELETE', headers: { authorization: `Bearer ${adminToken}` } });
    const text = await response.text();
    if (!response.ok) throw new Error(`deleting workspace ${id} answered ${response.status}: ${text.slice(0, 300)}`);
    deleted.push(id);
  }
  return deleted;
}
