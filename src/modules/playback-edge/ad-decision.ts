import type { Clock } from '../../platform/clock.js';

/** An ad configuration as the ad decision server needs it. */
export interface AdDecisionConfig {
  name: string;
  adServerUrl: string;
  /** The ad assets the configuration names (the workspace's library). */
  adAssetIds: string[];
  /** How long the simulated server takes to answer. */
  simulatedLatencyMs: number;
}

export interface AdDecisionRequest {
  owner: string;
  contentId: string;
  session: string;
  config: AdDecisionConfig;
  /** The URL's `ad.*` parameters, passed on to the ad server (targeting). */
  targeting: Record<string, string>;
}

/** The port to the third-party ad decision server (the default one is simulated). */
export interface AdDecisionServer {
  /** The ad assets to play before the content, in order (ids of the workspace's library; none: no preroll). */
  decide(request: AdDecisionRequest): Promise<string[]>;
}

/** Answers after the configuration's `simulatedLatencyMs` (on the clock) with every ad asset it names. */
export class SimulatedAdDecisionServer implements AdDecisionServer {
  constructor(private readonly clock: Clock) {}

  decide(request: AdDecisionRequest): Promise<string[]> {
    const ads = [...request.config.adAssetIds];
    if (request.config.simulatedLatencyMs <= 0) return Promise.resolve(ads);
    return new Promise((resolve) => this.clock.setTimer(() => resolve(ads), request.config.simulatedLatencyMs));
  }
}

export type AdDecisionOutcome = { kind: 'ads'; ads: string[] } | { kind: 'timeout' } | { kind: 'failed'; error: unknown };

/** Asks the ad server and gives up after `timeoutMs` of the clock. Never rejects. */
export function decideWithin(server: AdDecisionServer, request: AdDecisionRequest, clock: Clock, timeoutMs: number): Promise<AdDecisionOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const cancel = clock.setTimer(() => {
      if (settled) return;
      settled = true;
      resolve({ kind: 'timeout' });
    }, timeoutMs);
    server.decide(request).then(
      (ads) => {
        if (settled) return;
        settled = true;
        cancel();
        resolve({ kind: 'ads', ads });
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        cancel();
        resolve({ kind: 'failed', error });
      },
    );
  });
}
