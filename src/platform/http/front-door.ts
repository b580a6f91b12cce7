import swaggerUi from '@fastify/swagger-ui';
import type { App } from './types.js';

/** Where people land: the dashboard (the root redirects there) and the browsable API reference. */
export const DASHBOARD_PATH = '/dashboard';
export const API_REFERENCE_PATH = '/docs';
export const OPENAPI_PATH = '/api/v4/openapi.json';

/**
 * Swagger UI runs its own scripts from /docs/static, reads the document from this origin, and
 * shows its logo as a data: image; nothing else. Styles may be inline: the UI injects a <style>
 * element of its own (a style cannot run code; scripts stay 'self' only).
 */
export const API_REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * `GET /` redirects to the dashboard, and `/docs` is a browsable reference of the OpenAPI
 * document (@fastify/swagger-ui, reading `/api/v4/openapi.json`, the one the API serves).
 * Both are public: the reference shows what the API is, every call it tries is signed as usual.
 */
export async function registerFrontDoor(app: App): Promise<void> {
  app.get('/', { config: { auth: 'none' }, schema: { hide: true } }, (_request, reply) => reply.redirect(DASHBOARD_PATH, 302));

  await app.register(async (docs) => {
    // The plugin's own routes carry no auth policy: every one of them is public.
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, auth: 'none' };
    });
    await docs.register(swaggerUi, {
      routePrefix: API_REFERENCE_PATH,
      staticCSP: API_REFERENCE_CSP,
      theme: { title: 'Playline v4 API reference' },
      uiConfig: {
        // `urls` wins over the plugin's own copy at /docs/json: the reference reads the document the API serves.
        urls: [{ url: OPENAPI_PATH, name: 'Playline v4 API' }],
        deepLinking: true,
        displayRequestDuration: true,
        tryItOutEnabled: false,
      },
    });
  });
}
