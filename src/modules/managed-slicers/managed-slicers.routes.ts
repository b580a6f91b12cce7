import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../platform/errors.js';
import { authOf } from '../../platform/http/auth-hook.js';
import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import {
  ManagedSlicerCollection,
  ManagedSlicerSchema,
  ManagedSlicerTaskCollection,
  ManagedSlicerTaskSchema,
  SlicerCreateBody,
  SlicerListQuery,
  SlicerParams,
  SlicerUpdateBody,
  TaskListQuery,
  TaskParams,
} from './managed-slicers.schema.js';
import type { ManagedSlicerService } from './managed-slicers.service.js';
import { SLICERS_PATH, TASKS_PATH, restartView, slicerCollectionView, slicerView, taskCollectionView, taskView } from './managed-slicers.view.js';

export interface ManagedSlicerRouteDeps {
  managedSlicers: ManagedSlicerService;
}

const tags = ['managed-slicers'];

/**
 * AJV would silently drop keys a body schema does not know; name them instead, so a typo
 * (`ingestProtocol`) is a 400 rather than an ignored change.
 */
const rejectUnknownFields = (known: readonly string[]) => async (request: FastifyRequest) => {
  const body = request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const unknown = Object.keys(body).filter((key) => !known.includes(key));
  if (unknown.length === 0) return;
  throw new AppError('validation_failed', `Unknown field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`, {
    errors: unknown.map((key) => ({ path: `/${key}`, message: 'is not a field of a managed slicer' })),
  });
};
const knownFields = Object.keys(SlicerCreateBody.properties);

/** The path that was called, with its filters and page but without the signature. */
function selfPath(path: string, query: Record<string, unknown>, cursor?: string): string {
  const params = new URLSearchParams();
  for (const key of ['state', 'operation', 'slicer_id', 'limit'] as const) {
    const value = query[key];
    if (value !== undefined) params.set(key, String(value));
  }
  if (cursor !== undefined) params.set('cursor', cursor);
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

/** Announces the next page in a `Link` header, keeping the body in the spec's Collection shape. */
function linkNext(reply: FastifyReply, path: string, query: Record<string, unknown>, nextCursor: string | undefined): void {
  if (nextCursor !== undefined) void reply.header('link', `<${selfPath(path, query, nextCursor)}>; rel="next"`);
}

/** Managed slicers and their tasks: every change answers at once with the slicer and its task. */
export async function managedSlicerRoutes(api: App, deps: ManagedSlicerRouteDeps): Promise<void> {
  const slicers = deps.managedSlicers;

  api.post('/managed-slicer/slicers', {
    config: { auth: 'api' },
    preValidation: rejectUnknownFields(knownFields),
    schema: {
      tags, summary: 'Create a managed slicer (carried out by a CREATE task)', body: SlicerCreateBody,
      response: { 201: ManagedSlicerSchema, ...problemResponses(400, 401, 409) },
    },
  }, async (request, reply) => {
    const created = await slicers.create(authOf(request).owner, request.body);
    void reply.code(201).header('location', `${SLICERS_PATH}/${created.slicer.id}`);
    return slicerView(created, slicers.liveStatusOf(created.slicer));
  });

  api.get('/managed-slicer/slicers', {
    config: { auth: 'api' },
    schema: {
      tags, summary: 'List managed slicers, newest first (next page in the Link header)', querystring: SlicerListQuery,
      response: { 200: ManagedSlicerCollection, ...problemResponses(400, 401) },
    },
  }, async (request, reply) => {
    const page = await slicers.list(authOf(request).owner, request.query);
    linkNext(reply, SLICERS_PATH, request.query, page.nextCursor);
    return slicerCollectionView(selfPath(SLICERS_PATH, request.query, request.query.cursor), page.items, page.total, (slicer) => slicers.liveStatusOf(slicer));
  });

  api.get('/managed-slicer/slicers/tasks', {
    config: { auth: 'api' },
    schema: {
      tags, summary: 'List slicer tasks, newest first: every task without parameters; optionally filtered, or paged with limit (next page in the Link header)',
      querystring: TaskListQuery, response: { 200: ManagedSlicerTaskCollection, ...problemResponses(400, 401) },
    },
  }, async (request, reply) => {
    const { state, operation, slicer_id: slicerId, limit, cursor } = request.query;
    const page = await slicers.listTasks(authOf(request).owner, { state, operation, slicerId, limit, cursor });
    linkNext(reply, TASKS_PATH, request.query, page.nextCursor);
    return taskCollectionView(selfPath(TASKS_PATH, request.query, cursor), page.items, page.total);
  });

  api.get('/managed-slicer/slicers/tasks/:id', {
    config: { auth: 'api' },
    schema: { tags, summary: 'One slicer task', params: TaskParams, response: { 200: ManagedSlicerTaskSchema, ...problemResponses(401, 404) } },
  }, async (request) => taskView(await slicers.getTask(authOf(request).owner, request.params.id)));

  api.get('/managed-slicer/slicers/restart/:id', {
    config: { auth: 'api' },
    schema: {
      tags, summary: 'Restart a managed slicer (carried out by a RESTART task)', params: SlicerParams,
      description:
        'Answers at once with the slicer, `@id` being this restart resource, and its RESTART task: IN_PROGRESS when the ' +
        'task runner took it up at once, PENDING while an earlier task of the slicer runs or every runner slot is busy.',
      response: { 202: ManagedSlicerSchema, ...problemResponses(401, 404, 409) },
    },
  }, async (request, reply) => {
    void reply.code(202);
    const restarted = await slicers.restart(authOf(request).owner, request.params.id);
    return restartView(restarted, slicers.liveStatusOf(restarted.slicer));
  });

  api.post('/managed-slicer/slicers/:id/rotate-stream-key', {
    config: { auth: 'api' },
    schema: {
      tags, summary: 'Rotate the stream key of a managed slicer (its process restarts with the new key: a RESTART task)', params: SlicerParams,
      description:
        'Replaces the stream key that the slicer\'s `ingest_url` carries and answers at once with the slicer, its new ' +
        '`ingest_url` and the RESTART task that restarts its process with the new key: an encoder still using the old key ' +
        'is disconnected and refused from then on. A slicer being deleted keeps its key (409).',
      response: { 202: ManagedSlicerSchema, ...problemResponses(401, 404, 409) },
    },
  }, async (request, reply) => {
    void reply.code(202);
    const rotated = await slicers.rotateStreamKey(authOf(request).owner, request.params.id);
    return slicerView(rotated, slicers.liveStatusOf(rotated.slicer));
  });

  api.get('/managed-slicer/slicers/:id', {
    config: { auth: 'api' },
    schema: { tags, summary: 'One managed slicer with its latest task', params: SlicerParams, response: { 200: ManagedSlicerSchema, ...problemResponses(401, 404) } },
  }, async (request) => {
    const found = await slicers.get(authOf(request).owner, request.params.id);
    return slicerView(found, slicers.liveStatusOf(found.slicer));
  });

  api.patch('/managed-slicer/slicers/:id', {
    config: { auth: 'api' },
    preValidation: rejectUnknownFields(knownFields),
    schema: {
      tags, summary: 'Change a managed slicer (carried out by an UPDATE task)', params: SlicerParams, body: SlicerUpdateBody,
      response: { 202: ManagedSlicerSchema, ...problemResponses(400, 401, 404, 409) },
    },
  }, async (request, reply) => {
    void reply.code(202);
    const updated = await slicers.update(authOf(request).owner, request.params.id, request.body);
    return slicerView(updated, slicers.liveStatusOf(updated.slicer));
  });

  api.delete('/managed-slicer/slicers/:id', {
    config: { auth: 'api' },
    schema: {
      tags, summary: 'Delete a managed slicer (carried out by a DELETE task)', params: SlicerParams,
      response: { 202: ManagedSlicerSchema, ...problemResponses(401, 404, 409) },
    },
  }, async (request, reply) => {
    void reply.code(202);
    const deleting = await slicers.delete(authOf(request).owner, request.params.id);
    return slicerView(deleting, slicers.liveStatusOf(deleting.slicer));
  });
}
