// One line of a Kubernetes watch stream, `{"type": ..., "object": ...}`, read into what the loop acts on.
// A line that is not JSON, or not an event of a known type with the object that type carries, is
// `unparsable`: the loop logs it, counts it and relists, since it cannot know what it missed.
import { parseEndpointSlice, type EndpointSlice } from './slice.js';
import type { SliceEventType } from './slice-cache.js';

export type WatchLine =
  | { kind: 'event'; type: SliceEventType; slice: EndpointSlice }
  | { kind: 'bookmark'; resourceVersion: string }
  /** An in-stream Status; `code` 410 means the resourceVersion is too old (Expired; older servers: Gone). */
  | { kind: 'error'; code: number | undefined; reason: string | undefined; message: string | undefined }
  | { kind: 'unparsable'; why: string };

export function parseWatchLine(line: string): WatchLine {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch (error) {
    return { kind: 'unparsable', why: `not JSON (${(error as Error).message})` };
  }
  if (!isObject(data) || typeof data.type !== 'string') return { kind: 'unparsable', why: 'no event type' };
  const object = data.object;
  switch (data.type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED': {
      const parsed = parseEndpointSlice(object);
      if ('error' in parsed) return { kind: 'unparsable', why: `${data.type} object: ${parsed.error}` };
      return { kind: 'event', type: data.type, slice: parsed.slice };
    }
    case 'BOOKMARK': {
      const version = isObject(object) && isObject(object.metadata) ? object.metadata.resourceVersion : undefined;
      if (typeof version !== 'string' || version === '') {
        return { kind: 'unparsable', why: 'BOOKMARK without metadata.resourceVersion' };
      }
      return { kind: 'bookmark', resourceVersion: version };
    }
    case 'ERROR': {
      const status = isObject(object) ? object : {};
      return {
        kind: 'error',
        code: typeof status.code === 'number' ? status.code : undefined,
        reason: typeof status.reason === 'string' ? status.reason : undefined,
        message: typeof status.message === 'string' ? status.message : undefined,
      };
    }
    default:
      return { kind: 'unparsable', why: `unknown event type ${JSON.stringify(data.type).slice(0, 40)}` };
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
