import type { KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';
import type { KubeObject } from '../cache/object.js';
import { KubeApiError, type RequestTarget } from './errors.js';
import { decodeObject, type ObjectInput, type ObjectOf, resourceSchema } from './object-schema.js';
import { collectionPath, type ObjectKey, objectPath, type ResourceKind } from './resource.js';
import { type HttpMethod, type KubeRequest, KubeTransport, type QueryValue } from './transport.js';

export const MERGE_PATCH = 'application/merge-patch+json';
export const JSON_PATCH = 'application/json-patch+json';
export const APPLY_PATCH = 'application/apply-patch+yaml';

/** One RFC 6902 operation. */
export type JsonPatchOperation =
  | { readonly op: 'add' | 'replace' | 'test'; readonly path: string; readonly value: unknown }
  | { readonly op: 'remove'; readonly path: string }
  | { readonly op: 'move' | 'copy'; readonly from: string; readonly path: string };

export interface RequestOptions {
  readonly signal?: AbortSignal | undefined;
}

export interface WriteOptions extends RequestOptions {
  /** Overrides the client's field manager for this write. */
  readonly fieldManager?: string | undefined;
  /** `All` to validate and admit without persisting. */
  readonly dryRun?: 'All' | undefined;
  /** How the server treats unknown or duplicate fields: `Strict` rejects them (422), `Warn` (server default) warns. */
  readonly fieldValidation?: 'Strict' | 'Warn' | 'Ignore' | undefined;
}

export interface PatchOptions extends WriteOptions {
  /** `status` (or another subresource) to patch it instead of the main resource. */
  readonly subresource?: string | undefined;
}

export interface ApplyOptions extends PatchOptions {
  /** Take over fields owned by other managers (controller-runtime's convention for controllers); default true. */
  readonly force?: boolean | undefined;
}

export interface ClientListOptions extends RequestOptions {
  /** Namespace to list in; all namespaces when absent (or for cluster-scoped resources). */
  readonly namespace?: string | undefined;
  readonly labelSelector?: string | undefined;
  readonly fieldSelector?: string | undefined;
  readonly limit?: number | undefined;
  readonly continue?: string | undefined;
}

export interface DeleteOptions extends RequestOptions {
  /** The delete applies only if the object still has this uid / resourceVersion (409 Conflict otherwise). */
  readonly preconditions?: { readonly uid?: string | undefined; readonly resourceVersion?: string | undefined };
  readonly propagationPolicy?: 'Foreground' | 'Background' | 'Orphan' | undefined;
  readonly gracePeriodSeconds?: number | undefined;
  readonly dryRun?: 'All' | undefined;
}

export interface ObjectList<T> {
  readonly items: T[];
  /** The collection's resourceVersion (to start a watch from). */
  readonly resourceVersion: string;
  /** Token for the next page; empty when this was the last. */
  readonly continue: string;
}

export interface ClientOptions {
  /** The field manager for writes (server-side apply needs one); e.g. the controller's name. */
  readonly fieldManager: string;
  readonly requestTimeoutMs?: number;
}

const listSchema = z.looseObject({
  metadata: z.looseObject({ resourceVersion: z.string().optional(), continue: z.string().optional() }).optional(),
  items: z.array(z.unknown()),
});

/**
 * A small typed client for any resource: reads are parsed with the resource's schema (see `typedResource`), writes
 * carry the client's field manager, and every failure is a `KubeApiError` naming the verb and the object.
 */
export class Client {
  readonly fieldManager: string;
  readonly #transport: KubeTransport;

  constructor(kubeConfig: KubeConfig, options: ClientOptions) {
    this.fieldManager = options.fieldManager;
    this.#transport = new KubeTransport(
      kubeConfig,
      options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs },
    );
  }

  async get<R extends ResourceKind>(resource: R, key: ObjectKey, options: RequestOptions = {}): Promise<ObjectOf<R>> {
    const body = await this.#send(resource, 'GET', 'get', key, { signal: options.signal });
    return parseObject(resource, body, target(resource, 'get', key));
  }

  /** One page of a list (all of it unless `limit` is set). */
  async list<R extends ResourceKind>(resource: R, options: ClientListOptions = {}): Promise<ObjectList<ObjectOf<R>>> {
    const requestTarget: RequestTarget = { verb: 'list', resource: resource.plural, namespace: options.namespace };
    const body = await this.#transport.request({
      method: 'GET',
      path: collectionPath(resource, options.namespace),
      query: {
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        limit: options.limit,
        continue: options.continue,
      },
      signal: options.signal,
      target: requestTarget,
    });
    const list = listSchema.safeParse(body);
    if (!list.success) throw invalidResponse(requestTarget, list.error);
    return {
      items: list.data.items.map((item) => parseObject(resource, withTypeMeta(resource, item), requestTarget)),
      resourceVersion: list.data.metadata?.resourceVersion ?? '',
      continue: list.data.metadata?.continue ?? '',
    };
  }

  /** Every item, following continue tokens page by page. */
  async listAll<R extends ResourceKind>(
    resource: R,
    options: Omit<ClientListOptions, 'continue'> = {},
  ): Promise<ObjectList<ObjectOf<R>>> {
    const items: ObjectOf<R>[] = [];
    let token: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.list(resource, { ...options, limit: options.limit ?? 500, continue: token });
      items.push(...page.items);
      resourceVersion = page.resourceVersion;
      token = page.continue || undefined;
    } while (token);
    return { items, resourceVersion, continue: '' };
  }

  async create<R extends ResourceKind, O extends ObjectInput>(
    resource: R,
    object: O,
    options: WriteOptions = {},
  ): Promise<ObjectOf<R>> {
    const key = {
      namespace: object.metadata.namespace,
      name: object.metadata.name ?? object.metadata.generateName ?? '',
    };
    const requestTarget = target(resource, 'create', key);
    const body = await this.#transport.request({
      method: 'POST',
      path: collectionPath(resource, resourceNamespace(resource, object.metadata.namespace, requestTarget)),
      query: this.#writeQuery(options),
      body: withTypeMeta(resource, object),
      signal: options.signal,
      target: requestTarget,
    });
    return parseObject(resource, body, requestTarget);
  }

  /**
   * Replaces the object (PUT). Its `metadata.resourceVersion` is the precondition: a stale one fails with a 409
   * Conflict (`isConflict`), which a reconciler answers by returning the error and retrying from the cache.
   */
  async update<R extends ResourceKind, O extends ObjectInput>(
    resource: R,
    object: O,
    options: PatchOptions = {},
  ): Promise<ObjectOf<R>> {
    const key = keyOfInput(object);
    const verb = options.subresource ? `update ${options.subresource}` : 'update';
    const body = await this.#send(resource, 'PUT', verb, key, {
      subresource: options.subresource,
      query: this.#writeQuery(options),
      body: withTypeMeta(resource, object),
      signal: options.signal,
    });
    return parseObject(resource, body, target(resource, verb, key, options.subresource));
  }

  /** Replaces the status subresource (PUT .../status), with the same resourceVersion precondition as `update`. */
  updateStatus<R extends ResourceKind, O extends ObjectInput>(
    resource: R,
    object: O,
    options: WriteOptions = {},
  ): Promise<ObjectOf<R>> {
    return this.update(resource, object, { ...options, subresource: 'status' });
  }

  /** Deletes the object; resolves once the API server accepted the delete (finalizers may still hold it). */
  async delete(resource: ResourceKind, key: ObjectKey, options: DeleteOptions = {}): Promise<void> {
    await this.#send(resource, 'DELETE', 'delete', key, {
      query: { dryRun: options.dryRun },
      body: {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        ...(options.preconditions ? { preconditions: options.preconditions } : {}),
        ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}),
        ...(options.gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds: options.gracePeriodSeconds }),
      },
      signal: options.signal,
    });
  }

  /**
   * JSON merge patch (RFC 7386). Lists are replaced whole, so a patch that writes a list should carry
   * `metadata.resourceVersion` as a precondition.
   */
  async mergePatch<R extends ResourceKind>(
    resource: R,
    key: ObjectKey,
    patch: Readonly<Record<string, unknown>>,
    options: PatchOptions = {},
  ): Promise<ObjectOf<R>> {
    return this.#patch(resource, key, patch, MERGE_PATCH, options, {});
  }

  /** JSON patch (RFC 6902); a `test` operation is a precondition. */
  async jsonPatch<R extends ResourceKind>(
    resource: R,
    key: ObjectKey,
    operations: readonly JsonPatchOperation[],
    options: PatchOptions = {},
  ): Promise<ObjectOf<R>> {
    return this.#patch(resource, key, operations, JSON_PATCH, options, {});
  }

  /**
   * Server-side apply: the object states the fields this field manager owns; fields it stops stating are removed.
   * `force` (default true) takes over fields other managers own, as controller-runtime controllers do.
   */
  async apply<R extends ResourceKind, O extends ObjectInput>(
    resource: R,
    object: O,
    options: ApplyOptions = {},
  ): Promise<ObjectOf<R>> {
    const key = keyOfInput(object);
    return this.#patch(resource, key, withTypeMeta(resource, object), APPLY_PATCH, options, {
      force: options.force ?? true,
    });
  }

  /** Server-side apply of the status subresource: `object` carries apiVersion, kind, metadata and `status`. */
  applyStatus<R extends ResourceKind, O extends ObjectInput>(
    resource: R,
    object: O,
    options: Omit<ApplyOptions, 'subresource'> = {},
  ): Promise<ObjectOf<R>> {
    return this.apply(resource, object, { ...options, subresource: 'status' });
  }

  /**
   * Merge-patches `/status` with `metadata.resourceVersion` as a precondition: the write fails with a Conflict if the
   * object changed since `object` was read, so a status computed from stale data is never written.
   */
  patchStatus<R extends ResourceKind>(
    resource: R,
    object: KubeObject,
    status: unknown,
    options: Omit<PatchOptions, 'subresource'> = {},
  ): Promise<ObjectOf<R>> {
    const resourceVersion = object.metadata.resourceVersion;
    if (!resourceVersion) {
      throw new Error(
        `patch status of ${resource.kind} ${keyText(object.metadata)}: the object has no metadata.resourceVersion to use as a precondition`,
      );
    }
    return this.mergePatch(
      resource,
      object.metadata,
      { metadata: { resourceVersion }, status },
      {
        ...options,
        subresource: 'status',
      },
    );
  }

  /** Closes idle connections. */
  close(): void {
    this.#transport.close();
  }

  async #patch<R extends ResourceKind>(
    resource: R,
    key: ObjectKey,
    body: unknown,
    contentType: string,
    options: PatchOptions,
    extraQuery: Readonly<Record<string, QueryValue>>,
  ): Promise<ObjectOf<R>> {
    const verb = `${contentType === APPLY_PATCH ? 'apply' : 'patch'}${options.subresource ? ` ${options.subresource}` : ''}`;
    const response = await this.#send(resource, 'PATCH', verb, key, {
      subresource: options.subresource,
      query: { ...this.#writeQuery(options), ...extraQuery },
      body,
      contentType,
      signal: options.signal,
    });
    return parseObject(resource, response, target(resource, verb, key, options.subresource));
  }

  #writeQuery(options: WriteOptions): Record<string, QueryValue> {
    return {
      fieldManager: options.fieldManager ?? this.fieldManager,
      dryRun: options.dryRun,
      fieldValidation: options.fieldValidation,
    };
  }

  #send(
    resource: ResourceKind,
    method: HttpMethod,
    verb: string,
    key: ObjectKey,
    request: Omit<KubeRequest, 'method' | 'path' | 'target'> & { subresource?: string | undefined },
  ): Promise<unknown> {
    const { subresource, ...rest } = request;
    const requestTarget = target(resource, verb, key, subresource);
    const path = objectPath(resource, {
      namespace: resourceNamespace(resource, key.namespace, requestTarget),
      name: key.name,
    });
    return this.#transport.request({
      ...rest,
      method,
      path: subresource ? `${path}/${subresource}` : path,
      target: requestTarget,
    });
  }
}

function target(resource: ResourceKind, verb: string, key: ObjectKey, subresource?: string): RequestTarget {
  return { verb, resource: resource.kind, namespace: key.namespace, name: key.name, subresource };
}

function keyOfInput(object: ObjectInput): ObjectKey {
  const name = object.metadata.name;
  if (!name) throw new Error(`object of kind ${object.kind ?? 'unknown'} has no metadata.name`);
  return { namespace: object.metadata.namespace, name };
}

function keyText(key: ObjectKey): string {
  return key.namespace ? `${key.namespace}/${key.name}` : key.name;
}

/** Namespaced resources need a namespace; cluster-scoped ones must not send one. */
function resourceNamespace(
  resource: ResourceKind,
  namespace: string | undefined,
  requestTarget: RequestTarget,
): string | undefined {
  if (!resource.namespaced) return undefined;
  if (!namespace) {
    throw new Error(
      `${requestTarget.verb} ${resource.kind} "${requestTarget.name ?? ''}": the resource is namespaced, but no namespace was given`,
    );
  }
  return namespace;
}

/** List items and hand-built objects may lack apiVersion/kind; the resource knows them. */
function withTypeMeta(resource: ResourceKind, object: unknown): unknown {
  if (typeof object !== 'object' || object === null) return object;
  return { apiVersion: resource.apiVersion, kind: resource.kind, ...object };
}

function parseObject<R extends ResourceKind>(resource: R, body: unknown, requestTarget: RequestTarget): ObjectOf<R> {
  const parsed = decodeObject(resourceSchema(resource), body);
  if (!parsed.success) throw invalidResponse(requestTarget, parsed.error);
  return parsed.data;
}

function invalidResponse(requestTarget: RequestTarget, error: z.ZodError): Error {
  return new KubeApiError(
    200,
    {
      reason: 'InvalidResponse',
      message: `the response does not match the expected schema: ${z.prettifyError(error)}`,
    },
    requestTarget,
  );
}
