import { type Client, isNotFound, type ObjectOf, type ResourceKind } from '@tally-ipam/controller-kit/client';

/** Items asked for per request: a huge list arrives page by page (`limit`/`continue`), as kubectl's `--chunk-size`. */
export const DEFAULT_PAGE_SIZE = 500;

export interface ListScope {
  /** Namespace to list in; all namespaces when undefined (cluster-scoped resources ignore it). */
  readonly namespace?: string | undefined;
  readonly fieldSelector?: string | undefined;
  readonly pageSize?: number | undefined;
}

/** Every object of a resource in scope, read page by page. */
export async function listPaged<R extends ResourceKind>(
  client: Client,
  resource: R,
  scope: ListScope = {},
): Promise<ObjectOf<R>[]> {
  const items: ObjectOf<R>[] = [];
  let token: string | undefined;
  do {
    const page = await client.list(resource, {
      namespace: resource.namespaced ? scope.namespace : undefined,
      fieldSelector: scope.fieldSelector,
      limit: scope.pageSize ?? DEFAULT_PAGE_SIZE,
      continue: token,
    });
    items.push(...page.items);
    token = page.continue || undefined;
  } while (token);
  return items;
}

/**
 * As `listPaged`, but a resource the API server does not serve (its CRD is not installed: 404 on the collection) is
 * no error: undefined. For the Metal3 API, which a management cluster may not have.
 */
export async function listIfServed<R extends ResourceKind>(
  client: Client,
  resource: R,
  scope: ListScope = {},
): Promise<ObjectOf<R>[] | undefined> {
  try {
    return await listPaged(client, resource, scope);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** One object, or undefined when it does not exist. */
export async function getOrMissing<R extends ResourceKind>(
  client: Client,
  resource: R,
  key: { namespace?: string | undefined; name: string },
): Promise<ObjectOf<R> | undefined> {
  try {
    return await client.get(resource, key);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
