import { authOf } from '../../platform/http/auth-hook.js';
import { problemResponses } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import {
  ScheduleActionBody,
  ScheduleCreateBody,
  ScheduleDeleted,
  ScheduleListQuery,
  SchedulePatchBody,
  SyndicationSchedule,
  TargetIdParams,
  collectionOf,
} from './syndication.schema.js';
import type { ScheduleService } from './schedule.service.js';
import { collection, scheduleDeletedView, scheduleView } from './syndication.view.js';

const tags = ['syndication'];
const params = TargetIdParams;

/** `/syndication-schedule` CRUD and `/syndication-schedule-action` (start/stop). */
export async function scheduleRoutes(api: App, deps: { schedules: ScheduleService }): Promise<void> {
  const { schedules } = deps;

  api.post('/syndication-schedule', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Create a publishing schedule (stopped)', body: ScheduleCreateBody, response: { 201: SyndicationSchedule, ...problemResponses(400, 401) } },
  }, async (request, reply) => {
    const created = await schedules.create(authOf(request).owner, request.body);
    reply.code(201);
    return scheduleView(created);
  });

  api.get('/syndication-schedule', {
    config: { auth: 'api' },
    schema: { tags, summary: 'List publishing schedules, optionally of one target', querystring: ScheduleListQuery, response: { 200: collectionOf(SyndicationSchedule, 'Publishing schedules'), ...problemResponses(400, 401) } },
  }, async (request) => {
    const rows = await schedules.list(authOf(request).owner, request.query.syndication_target_id);
    return collection('/syndication-schedule', rows.map(scheduleView));
  });

  api.get('/syndication-schedule/:id', {
    config: { auth: 'api' },
    schema: { tags, summary: 'A publishing schedule', params, response: { 200: SyndicationSchedule, ...problemResponses(401, 404) } },
  }, async (request) => scheduleView(await schedules.get(authOf(request).owner, request.params.id)));

  api.patch('/syndication-schedule/:id', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Update a schedule (409 while active)', params, body: SchedulePatchBody, response: { 200: SyndicationSchedule, ...problemResponses(400, 401, 404, 409) } },
  }, async (request) => scheduleView(await schedules.update(authOf(request).owner, request.params.id, request.body)));

  api.delete('/syndication-schedule/:id', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Delete a schedule (409 while active)', params, response: { 200: ScheduleDeleted, ...problemResponses(401, 404, 409) } },
  }, async (request) => {
    await schedules.remove(authOf(request).owner, request.params.id);
    return scheduleDeletedView(request.params.id);
  });

  api.patch('/syndication-schedule-action/:id', {
    config: { auth: 'api' },
    schema: { tags, summary: 'Start or stop publishing a schedule; the target status follows', params, body: ScheduleActionBody, response: { 200: SyndicationSchedule, ...problemResponses(400, 401, 404, 409) } },
  }, async (request) => scheduleView(await schedules.act(authOf(request).owner, request.params.id, request.body.mode)));
}
