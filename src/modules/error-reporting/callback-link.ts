import type { CallbackClusterLink } from './error-reporting.module.js';
import type { ChangeFeed } from '../../platform/cluster/change-feed.js';

const SETTINGS = 'callback-settings';
const PAUSE = 'callback-pause';
const RESUME = 'callback-resume';

/**
 * Error Reporting across instances over the change feed: a settings change saved on one
 * instance makes the others re-read the settings at once (their periodic check is the safety
 * net), an endpoint paused by one is paused by all, and one resumed on request (an operator's
 * resume, a passing settings test) is resumed by all. Publishing never blocks or throws.
 */
export const callbackLinkOf = (feed: ChangeFeed, onError: (error: unknown) => void = () => undefined): CallbackClusterLink => ({
  settingsChanged(owner) {
    feed.publish(SETTINGS, owner).catch(onError);
  },
  paused(url, pausedUntil, consecutiveFailures) {
    feed.publish(PAUSE, JSON.stringify([url, pausedUntil, consecutiveFailures])).catch(onError);
  },
  resumed(url) {
    feed.publish(RESUME, url).catch(onError);
  },
  async listen(handlers) {
    await feed.subscribe(SETTINGS, (owner) => handlers.settings(owner));
    await feed.subscribe(PAUSE, (payload) => {
      const [url, until, failures] = JSON.parse(payload) as [string, number, number];
      handlers.pause(url, until, failures);
    });
    const { resume } = handlers;
    if (resume) await feed.subscribe(RESUME, (url) => resume(url));
  },
});
