import { authOf } from '../../platform/http/auth-hook.js';
import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import {
  DeliveriesSchema, PutSettingsBody, SettingsSchema, TestBody, TestResultSchema,
} from './error-reporting.schema.js';
import type { ErrorReportingService } from './error-reporting.service.js';
import { deliveriesView, settingsView, testResultView } from './error-reporting.view.js';

export interface ErrorReportingRouteDeps {
  errorReporting: ErrorReportingService;
}

const tags = ['error-reporting'];

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
}
