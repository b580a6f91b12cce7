/** DRM systems a policy can target. */
export const drmProviders = ['widevine', 'playready', 'fairplay'] as const;
export type DrmProviderName = (typeof drmProviders)[number];

/** A DRM policy as stored: the provider and its settings (provider-specific, checked by the provider). */
export interface DrmPolicySettings {
  provider: DrmProviderName;
  settings: Record<string, unknown>;
}

/** The port to the DRM license provider: does it accept these policy settings? Empty list: yes. */
export interface DrmProvider {
  check(policy: DrmPolicySettings): string[];
}

const HDCP = ['none', 'type0', 'type1'];
const allowedKeys: Record<DrmProviderName, string[]> = {
  widevine: ['security_level', 'hdcp', 'license_duration_s', 'persistent'],
  playready: ['security_level', 'hdcp', 'license_duration_s', 'persistent'],
  fairplay: ['hdcp', 'license_duration_s', 'persistent'],
};

/**
 * The license providers' published rules, simulated: Widevine security levels 1-5, PlayReady
 * 150/2000/3000, FairPlay has none; HDCP none/type0/type1; a license lasts 1 s to 1 year;
 * `persistent` is a boolean; no other keys.
 */
export class SimulatedDrmProvider implements DrmProvider {
  check(policy: DrmPolicySettings): string[] {
    const problems: string[] = [];
    const s = policy.settings;
    for (const key of Object.keys(s)) {
      if (!allowedKeys[policy.provider].includes(key)) problems.push(`${policy.provider} does not support ${key}`);
    }
    const level = s.security_level;
    if (level !== undefined) {
      const ok = policy.provider === 'widevine' ? [1, 2, 3, 4, 5] : [150, 2000, 3000];
      if (typeof level !== 'number' || !ok.includes(level)) problems.push(`${policy.provider} security_level must be one of ${ok.join(', ')}`);
    }
    if (s.hdcp !== undefined && (typeof s.hdcp !== 'string' || !HDCP.includes(s.hdcp))) problems.push(`hdcp must be one of ${HDCP.join(', ')}`);
    const duration = s.license_duration_s;
    if (duration !== undefined && (typeof duration !== 'number' || !Number.isInteger(duration) || duration < 1 || duration > 31_536_000)) {
      problems.push('license_duration_s must be whole seconds from 1 to 31536000');
    }
    if (s.persistent !== undefined && typeof s.persistent !== 'boolean') problems.push('persistent must be true or false');
    return problems;
  }
}
