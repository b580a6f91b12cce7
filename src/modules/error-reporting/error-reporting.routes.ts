import { authOf } from '../../platform/http/auth-hook.js';
import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import {
  AttemptParams, DeliveriesSchema, LoggedAttemptCollection, LoggedAttemptDetailSchema, LoggedAttemptQuery, PutSettingsBody, SettingsSchema, TestBody,
  TestResultSchema,
} from './error-reporting.schema.js';
import type { LoggedAttemptQueryInput } from './error-reporting.schema.js';
import type { ErrorReportingService } from './error-reporting.service.js';
import {
  attemptsPath, deliveriesView, loggedAttemptCollectionView, loggedAttemptDetailView, settingsView, testResultView,
} from './error-reporting.view.js';

export interface ErrorReportingRouteDeps {
  errorReporting: ErrorReportingService;
}

const tags = ['error-reporting'];

/** The list path that was called, with its filter and page but without the signature. */
const attemptsSelfPath = (query: LoggedAttemptQueryInput, cursor?: string): string => {
  const params = new URLSearchParams();
  if (query.outcome !== undefined) params.set('outcome', query.outcome);
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (cursor !== undefined) params.set('cursor', cursor);
  const search = params.toString();
  return search ? `${attemptsPath}?${search}` : attemptsPath;
};

/** Error Reporting: callback settings with test-before-save, the test alone, deliveries, secret rotation. */
export async function errorReportingRoutes(app: App, deps: ErrorReportingRouteDeps): Promise<void> {
  const service = deps.errorReporting;

  app.get('/error-reporting/settings', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Your callback settings and signing secret', response: { 200: SettingsSchema, ...problemResponses(401) } },
  }, async (request) => settingsView(await service.getSettings(authOf(request).owner)));

  app.put('/error-reporting/settings', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Save the callback URL; it is saved only if a signed test POST to it is answered 200 within 5 s',
      body: PutSettingsBody,
      response: { 200: SettingsSchema, ...problemResponses(400, 401, 422) },
    },
  }, async (request) => {
    const { callback_url: callbackUrl, enabled } = request.body;
    return settingsView(await service.saveSettings(authOf(request).owner, { callbackUrl, enabled: enabled ?? true }));
  });

  app.delete('/error-reporting/settings', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Remove the callback URL (the signing secret is kept)', response: { 200: SettingsSchema, ...problemResponses(401) } },
  }, async (request) => settingsView(await service.clearSettings(authOf(request).owner)));

  app.post('/error-reporting/settings/rotate-secret', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Replace the signing secret; the old one keeps signing (a second signature) for 24 hours',
      response: { 200: SettingsSchema, ...problemResponses(401) },
    },
  }, async (request) => settingsView(await service.rotateSecret(authOf(request).owner)));

  app.post('/error-reporting/test', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'POST a signed sample report to a URL (or the saved one) and show what happened; saves nothing',
      body: TestBody,
      response: { 200: TestResultSchema, ...problemResponses(400, 401, 422) },
    },
  }, async (request) => testResultView(await service.testCallback(authOf(request).owner, request.body?.callback_url)));

  app.get('/error-reporting/deliveries', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Recent delivery attempts and counters (delivered, failed, dropped by reason, paused until)',
      response: { 200: DeliveriesSchema, ...problemResponses(401) },
    },
  }, async (request) => deliveriesView(await service.deliveries(authOf(request).owner)));

  app.get('/error-reporting/attempts', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'The delivery log: every logged attempt of the workspace (all instances), dropped reports included (outcome dropped), newest first, filtered by outcome',
      description: 'Attempts are kept for PLAYLINE_DELIVERY_LOG_RETENTION_H hours, at most PLAYLINE_DELIVERY_LOG_MAX_PER_WORKSPACE per workspace. The next page is in next_cursor and the Link header.',
      querystring: LoggedAttemptQuery,
      response: { 200: LoggedAttemptCollection, ...problemResponses(400, 401) },
    },
  }, async (request, reply) => {
    const page = await service.listAttempts(authOf(request).owner, request.query);
    if (page.nextCursor !== undefined) void reply.header('link', `<${attemptsSelfPath(request.query, page.nextCursor)}>; rel="next"`);
    return loggedAttemptCollectionView(attemptsSelfPath(request.query, request.query.cursor), page.items, page.total, page.nextCursor);
  });

  app.get('/error-reporting/attempts/:attempt_id', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'One logged attempt with the report sent (payload), the exact body and the signature headers',
      params: AttemptParams,
      response: { 200: LoggedAttemptDetailSchema, ...problemResponses(401, 404) },
    },
  }, async (request) => loggedAttemptDetailView(await service.getAttempt(authOf(request).owner, request.params.attempt_id)));

  app.post('/error-reporting/attempts/:attempt_id/resend', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'Send a logged report (a dropped one too) again to the current callback URL: a new attempt, signed anew (same webhook-id), logged; answers its outcome',
      description: 'Best effort, like every delivery: one POST, no retry. It goes out even while the endpoint is paused, and does not change the pause.',
      params: AttemptParams,
      response: { 200: LoggedAttemptDetailSchema, ...problemResponses(401, 404, 422) },
    },
  }, async (request) => loggedAttemptDetailView(await service.resend(authOf(request).owner, request.params.attempt_id)));

  app.post('/error-reporting/settings/resume', {
    config: { auth: 'api' },
    schema: {
      tags,
      summary: 'End the pause of the callback endpoint now (on every instance); queued and new reports are sent at once',
      description: 'A passing test of the saved callback URL (POST /api/v4/error-reporting/test) resumes it too.',
      response: { 200: DeliveriesSchema, ...problemResponses(401, 422) },
    },
  }, async (request) => deliveriesView(await service.resume(authOf(request).owner)));
}
