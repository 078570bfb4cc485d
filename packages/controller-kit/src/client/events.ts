import { V1MicroTime } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeObject } from '../cache/object.js';
import type { Client } from './client.js';
import { isNotFound } from './errors.js';
import type { ResourceKind } from './resource.js';

export const EVENTS_RESOURCE: ResourceKind = {
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  plural: 'events',
  namespaced: true,
};

export type EventType = 'Normal' | 'Warning';

export interface EventInput {
  readonly type: EventType;
  /** Why the action was taken, UpperCamelCase (e.g. `AddressAllocated`). */
  readonly reason: string;
  /** What was done or failed, UpperCamelCase (e.g. `Allocate`). */
  readonly action: string;
  /** Human-readable detail; cut to 1 kB as the API requires. */
  readonly note: string;
  /** A second object the event is about (e.g. the pool an address came from). */
  readonly related?: KubeObject | undefined;
}

export interface EventRecorderOptions {
  readonly client: Client;
  /** The controller's name, e.g. `tally.ipam.cluster.x-k8s.io/claim-controller`. */
  readonly reportingController: string;
  /** This process's identity, e.g. the pod name. */
  readonly reportingInstance: string;
  readonly logger: Logger;
  /** Repeats of the same event within this window update the event's series instead of creating new events. */
  readonly seriesWindowMs?: number;
  readonly now?: () => Date;
}

interface RecordedEvent {
  readonly namespace: string;
  readonly name: string;
  count: number;
  lastSeenMs: number;
}

const MAX_NOTE_BYTES = 1024;
const MAX_REMEMBERED = 4096;
/** client-go's events library treats repeats within 6 minutes as one series. */
const DEFAULT_SERIES_WINDOW_MS = 6 * 60 * 1000;

/**
 * Records `events.k8s.io/v1` Events. Recording never throws into a reconcile: failures are logged and swallowed,
 * because an event is a courtesy to humans, not part of the controller's state. Repeats of the same event (same
 * object, type, reason, action and note) within the series window become a series on the first event.
 */
export class EventRecorder {
  readonly #options: EventRecorderOptions;
  readonly #recent = new Map<string, Promise<RecordedEvent | undefined>>();
  #sequence = 0;

  constructor(options: EventRecorderOptions) {
    this.#options = options;
  }

  normal(regarding: KubeObject, reason: string, action: string, note: string): Promise<void> {
    return this.record(regarding, { type: 'Normal', reason, action, note });
  }

  warning(regarding: KubeObject, reason: string, action: string, note: string): Promise<void> {
    return this.record(regarding, { type: 'Warning', reason, action, note });
  }

  /** Records one event; the promise always resolves. */
  async record(regarding: KubeObject, event: EventInput): Promise<void> {
    const key = seriesKey(regarding, event);
    const previous = this.#recent.get(key);
    const next = this.#recordAfter(previous, regarding, event);
    this.#recent.delete(key);
    this.#recent.set(key, next);
    if (this.#recent.size > MAX_REMEMBERED) {
      const oldest = this.#recent.keys().next();
      if (!oldest.done) this.#recent.delete(oldest.value);
    }
    await next;
  }

  async #recordAfter(
    previous: Promise<RecordedEvent | undefined> | undefined,
    regarding: KubeObject,
    event: EventInput,
  ): Promise<RecordedEvent | undefined> {
    const earlier = await previous;
    const now = this.#options.now?.() ?? new Date();
    const windowMs = this.#options.seriesWindowMs ?? DEFAULT_SERIES_WINDOW_MS;
    try {
      if (earlier && now.getTime() - earlier.lastSeenMs <= windowMs) {
        const continued = await this.#continueSeries(earlier, now);
        if (continued) return continued;
      }
      return await this.#create(regarding, event, now);
    } catch (error) {
      this.#options.logger.warn(
        {
          err: error,
          regarding: objectReference(regarding),
          reason: event.reason,
          action: event.action,
          type: event.type,
        },
        'could not record event',
      );
      return earlier;
    }
  }

  async #continueSeries(earlier: RecordedEvent, now: Date): Promise<RecordedEvent | undefined> {
    const count = earlier.count + 1;
    try {
      await this.#options.client.mergePatch(
        EVENTS_RESOURCE,
        { namespace: earlier.namespace, name: earlier.name },
        { series: { count, lastObservedTime: microTime(now) } },
      );
    } catch (error) {
      // Events expire (the API server's event TTL); then the series starts over with a new event.
      if (isNotFound(error)) return undefined;
      throw error;
    }
    return { namespace: earlier.namespace, name: earlier.name, count, lastSeenMs: now.getTime() };
  }

  async #create(regarding: KubeObject, event: EventInput, now: Date): Promise<RecordedEvent> {
    const namespace = regarding.metadata.namespace ?? 'default';
    const name = `${regarding.metadata.name}.${this.#hexTimestamp(now)}`;
    await this.#options.client.create(EVENTS_RESOURCE, {
      apiVersion: EVENTS_RESOURCE.apiVersion,
      kind: EVENTS_RESOURCE.kind,
      metadata: { name, namespace },
      eventTime: microTime(now),
      reportingController: this.#options.reportingController,
      reportingInstance: this.#options.reportingInstance,
      type: event.type,
      reason: event.reason,
      action: event.action,
      note: clipNoteUtf8(event.note, MAX_NOTE_BYTES),
      regarding: objectReference(regarding),
      ...(event.related ? { related: objectReference(event.related) } : {}),
    });
    return { namespace, name, count: 1, lastSeenMs: now.getTime() };
  }

  /** client-go names events `<object>.<unix nanoseconds in hex>`; the sequence keeps same-millisecond names apart. */
  #hexTimestamp(now: Date): string {
    this.#sequence = (this.#sequence + 1) % 1_000_000;
    return (BigInt(now.getTime()) * 1_000_000n + BigInt(this.#sequence)).toString(16);
  }
}

/** The `ObjectReference` of an object, as events carry it. */
export function objectReference(object: KubeObject): Record<string, string> {
  const reference: Record<string, string> = { name: object.metadata.name };
  if (object.apiVersion) reference.apiVersion = object.apiVersion;
  if (object.kind) reference.kind = object.kind;
  if (object.metadata.namespace) reference.namespace = object.metadata.namespace;
  if (object.metadata.uid) reference.uid = object.metadata.uid;
  if (object.metadata.resourceVersion) reference.resourceVersion = object.metadata.resourceVersion;
  return reference;
}

/** The API server parses MicroTime with exactly six fractional digits; `V1MicroTime` formats it that way. */
export function microTime(date: Date): string {
  return new V1MicroTime(date.getTime()).toISOString();
}

function seriesKey(regarding: KubeObject, event: EventInput): string {
  const object =
    regarding.metadata.uid ?? `${regarding.kind}/${regarding.metadata.namespace}/${regarding.metadata.name}`;
  return JSON.stringify([object, event.type, event.reason, event.action, event.note]);
}

/** Marks a cut note, as api-types' `clipUtf8` marks cut values (3 bytes in UTF-8, counted in the limit). */
const NOTE_ELLIPSIS = '…';

/**
 * `text` cut to at most `maxBytes` bytes of UTF-8, the cut marked with an ellipsis. The kit's own copy of api-types'
 * `clipUtf8`: the generic runtime may not import product types (tools/architecture allows api-types only in src/capi/).
 */
function clipNoteUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  // Cut on a character boundary: decoding a cut multi-byte sequence would leave a replacement character.
  let end = Math.max(0, maxBytes - Buffer.byteLength(NOTE_ELLIPSIS, 'utf8'));
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString('utf8')}${NOTE_ELLIPSIS}`;
}
