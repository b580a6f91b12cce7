import { AjvCompiler, type BuildCompilerFromPool, type RouteDefinition } from '@fastify/ajv-compiler';
import type { FastifyServerOptions } from 'fastify';
import type { App } from './types.js';

type CompilerOptions = Parameters<BuildCompilerFromPool>[1];
type Validate = ReturnType<ReturnType<BuildCompilerFromPool>>;
/** What Fastify really passes to a validator compiler (the published type says a bare schema). */
type CompileRoute = (route: RouteDefinition) => Validate;

/**
 * Validators per part of the request. Query strings, path parameters and headers arrive as
 * text, so they are coerced to the schema's types (`top=5` is the integer 5). A JSON body
 * already has types: `"port": "2088"` or `"integrated": "true"` is a client error, so bodies
 * are validated without coercion. Both use Fastify's own compiler (its Ajv defaults, formats
 * and shared schemas); only `coerceTypes` differs.
 */
const buildValidator: BuildCompilerFromPool = (externalSchemas, ajvServerOption) => {
  const options = (ajvServerOption ?? {}) as { customOptions?: Record<string, unknown> };
  const coercing = AjvCompiler()(externalSchemas, options as CompilerOptions) as unknown as CompileRoute;
  const exact = AjvCompiler()(externalSchemas, { ...options, customOptions: { ...options.customOptions, coerceTypes: false } } as CompilerOptions) as unknown as CompileRoute;
  const compile: CompileRoute = (route) => (route.httpPart === 'body' ? exact(route) : coercing(route));
  return compile as unknown as ReturnType<BuildCompilerFromPool>;
};

export const schemaController: NonNullable<FastifyServerOptions['schemaController']> = { compilersFactory: { buildValidator } };

/**
 * JSON bodies, where an empty body is no body: published clients send
 * `Content-Type: application/json` on bodiless DELETE and GET requests. Anything else goes to
 * Fastify's own parser (prototype-poisoning guards included).
 */
export function acceptEmptyJsonBodies(app: App): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    // Fastify's JSON parser answers through `done` (its type also allows the promise form).
    void parseJson(request, body as string, done);
  });
}
