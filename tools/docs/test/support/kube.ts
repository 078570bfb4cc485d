import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';

/**
 * The API requests the examples need, on plain JSON: the guide's objects are of every kind (Tally's, Cluster API's,
 * CAPV's, Sim's, Metal3's, Events), and client-node's typed serializer would turn some of them into its own models
 * (dates, renamed fields) where the guide prints the JSON the API server sends.
 */

export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name?: string; readonly namespace?: string } & Record<string, unknown>;
  readonly [field: string]: unknown;
}

/** A refused request: the HTTP status, and the API server's `Status` (its `reason` and `message`) when it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly apiMessage: string,
    where: string,
  ) {
    super(`${where}: HTTP ${status} ${reason}: ${apiMessage}`);
  }
}

const ApiResource = z.looseObject({
  name: z.string(),
  kind: z.string(),
  namespaced: z.boolean(),
  singularName: z.string().optional(),
  shortNames: z.array(z.string()).optional(),
});
const ApiResourceList = z.looseObject({ groupVersion: z.string(), resources: z.array(ApiResource) });
const ApiGroupList = z.looseObject({
  groups: z.array(
    z.looseObject({
      preferredVersion: z.looseObject({ groupVersion: z.string() }),
      versions: z.array(z.looseObject({ groupVersion: z.string() })),
    }),
  ),
});
const Status = z.looseObject({ message: z.string(), reason: z.string().optional() });
const List = z.looseObject({ items: z.array(z.looseObject({})) });

/** Where a kind is served: its plural and scope. */
export interface Resource {
  readonly apiVersion: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** The names `kubectl` accepts for it: plural, singular, short names, kind in lower case. */
  readonly names: readonly string[];
}

export class Kube {
  readonly #kc: KubeConfig;
  readonly #resources = new Map<string, Resource[]>();

  constructor(kubeConfig: KubeConfig) {
    this.#kc = kubeConfig;
  }

  async request(method: 'GET' | 'PATCH' | 'DELETE' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const cluster = this.#kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const url = new URL(path, cluster.server);
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (body !== undefined) {
      headers['Content-Type'] = method === 'PATCH' ? 'application/apply-patch+yaml' : 'application/json';
    }
    const options: RequestOptions & { headers: Record<string, string> } = { method, headers, timeout: 30_000 };
    await this.#kc.applyToHTTPSOptions(options);
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const call = httpsRequest(url, options, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        response.on('error', reject);
      });
      call.on('timeout', () => call.destroy(new Error(`${method} ${path} timed out`)));
      call.on('error', reject);
      call.end(body === undefined ? undefined : JSON.stringify(body));
    });
    const parsed: unknown = text === '' ? undefined : JSON.parse(text);
    if (status >= 400) {
      const answer = Status.safeParse(parsed);
      throw new ApiError(
        status,
        answer.success ? (answer.data.reason ?? '') : '',
        answer.success ? answer.data.message : text,
        `${method} ${path}`,
      );
    }
    return parsed;
  }

  /** The kinds served at one group version (cached; asked again when a kind is not there yet, e.g. a new CRD). */
  async resources(apiVersion: string, refresh = false): Promise<Resource[]> {
    const cached = this.#resources.get(apiVersion);
    if (cached && !refresh) return cached;
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const list = ApiResourceList.parse(await this.request('GET', base));
    const resources = list.resources
      .filter((resource) => !resource.name.includes('/'))
      .map((resource) => ({
        apiVersion,
        kind: resource.kind,
        plural: resource.name,
        namespaced: resource.namespaced,
        names: [
          resource.name,
          resource.singularName ?? '',
          ...(resource.shortNames ?? []),
          resource.kind.toLowerCase(),
        ].filter(Boolean),
      }));
    this.#resources.set(apiVersion, resources);
    return resources;
  }

  async resource(apiVersion: string, kind: string): Promise<Resource> {
    const found =
      (await this.resources(apiVersion)).find((resource) => resource.kind === kind) ??
      (await this.resources(apiVersion, true)).find((resource) => resource.kind === kind);
    if (!found) throw new Error(`the API server serves no ${kind} in ${apiVersion}`);
    return found;
  }

  /** The resource `kubectl` would pick for a type name (`ipaddressclaim`, `tippool`, `ipclaims.ipam.metal3.io`). */
  async resourceNamed(type: string): Promise<Resource> {
    const [name = '', ...group] = type.split('.');
    // Every served version, the preferred one first: one group serves kinds at different versions (Cluster API's
    // claims at v1beta2, Tally's pools at v1alpha1, both in ipam.cluster.x-k8s.io).
    const groups = ApiGroupList.parse(await this.request('GET', '/apis')).groups.flatMap((entry) => [
      entry.preferredVersion.groupVersion,
      ...entry.versions.map((version) => version.groupVersion).filter((v) => v !== entry.preferredVersion.groupVersion),
    ]);
    const candidates = ['v1', ...groups].filter(
      (groupVersion) => group.length === 0 || groupVersion.startsWith(`${group.join('.')}/`),
    );
    for (const groupVersion of candidates) {
      const match = (await this.resources(groupVersion)).find((resource) => resource.names.includes(name));
      if (match) return match;
    }
    throw new Error(`no resource type is named "${type}"`);
  }

  /** The object's path; a namespaced object without a namespace is in `default`, as kubectl would put it. */
  async path(object: {
    apiVersion: string;
    kind: string;
    namespace?: string | undefined;
    name?: string | undefined;
  }): Promise<string> {
    const resource = await this.resource(object.apiVersion, object.kind);
    const base = object.apiVersion.includes('/') ? `/apis/${object.apiVersion}` : `/api/${object.apiVersion}`;
    const scope = resource.namespaced ? `/namespaces/${object.namespace ?? 'default'}` : '';
    return `${base}${scope}/${resource.plural}${object.name === undefined ? '' : `/${object.name}`}`;
  }

  /** Server-side apply, as `kubectl apply --server-side` does (forcing ownership: the guide is the one author). */
  async apply(object: KubeObject, fieldManager: string): Promise<void> {
    const name = object.metadata.name;
    if (!name) throw new Error(`a ${object.kind} to apply has no metadata.name`);
    const path = await this.path({ ...object, namespace: object.metadata.namespace, name });
    await this.request('PATCH', `${path}?fieldManager=${encodeURIComponent(fieldManager)}&force=true`, object);
  }

  async get(apiVersion: string, kind: string, name: string, namespace?: string): Promise<unknown> {
    return this.request('GET', await this.path({ apiVersion, kind, name, namespace }));
  }

  async list(apiVersion: string, kind: string, namespace?: string): Promise<Record<string, unknown>[]> {
    return List.parse(await this.request('GET', await this.path({ apiVersion, kind, namespace }))).items;
  }

  async delete(apiVersion: string, kind: string, name: string, namespace?: string): Promise<void> {
    await this.request('DELETE', await this.path({ apiVersion, kind, name, namespace }));
  }
}
