/**
 * MCP progress notifications for the live tools: when the client sent a progressToken,
 * each new stage of the polled job (retrieval, each voice, the chair) is reported as a
 * notifications/progress message while the tool waits.
 */
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { isObject, type JsonObject } from './results.ts';

export type ToolExtra = Pick<RequestHandlerExtra<ServerRequest, ServerNotification>, '_meta' | 'sendNotification'>;

/** Reports the stages of a polled job not reported yet. */
export type JobProgress = (job: JsonObject) => Promise<void>;

export function describeStage(stage: JsonObject): string {
  const text = (name: string) => (typeof stage[name] === 'string' ? stage[name] : '');
  if (stage.stage === 'retrieval') return `retrieval: ${Array.isArray(stage.sources) ? stage.sources.length : 0} sources`;
  if (stage.stage === 'voice')
    return stage.status === 'answered' ? `${text('name')} (${text('model_id')}) answered` : `${text('name')} (${text('model_id')}) failed: ${text('failure')}`;
  if (stage.stage === 'round2')
    return stage.status === 'failed'
      ? `${text('name')} round 2 failed: ${text('failure')} (its first answer stands)`
      : `${text('name')} ${text('status')} its position in round 2`;
  if (stage.stage === 'chair')
    return stage.status === 'started'
      ? 'the chair is synthesizing'
      : `the chair ${stage.status === 'done' ? 'answered' : 'failed'}${stage.chair ? ` (${text('chair')})` : ''}`;
  return text('stage');
}

/** undefined when the client asked for no progress. */
export function jobProgress(extra: ToolExtra | undefined): JobProgress | undefined {
  const token = extra?._meta?.progressToken;
  if (token === undefined || !extra) return undefined;
  let reported = 0;
  return async (job) => {
    const stages = Array.isArray(job.stages) ? job.stages.filter(isObject) : [];
    for (; reported < stages.length; reported++) {
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress: reported + 1, message: describeStage(stages[reported]!) },
      });
    }
  };
}
