import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { errorMessage } from './format.js';
import { kubeRequest } from './kube-request.js';

/** The field manager of every server-side apply made by this package. */
export const FIELD_MANAGER = 'tally-testenv';

const crdSchema = z.object({
  apiVersion: z.literal('apiextensions.k8s.io/v1'),
  kind: z.literal('CustomResourceDefinition'),
  metadata: z.object({ name: z.string().min(1) }).loose(),
  spec: z
    .object({
      group: z.string(),
      names: z.object({ plural: z.string() }).loose(),
      versions: z.array(z.object({ name: z.string(), served: z.boolean() }).loose()),
    })
    .loose(),
});

const crdStatusSchema = z.object({
  status: z
    .object({
      // A CRD that was just created reports `conditions: null` until its controllers have looked at it.
      conditions: z.array(z.object({ type: z.string(), status: z.string(), message: z.string().optional() })).nullish(),
    })
    .nullish(),
});

const discoverySchema = z.object({ resources: z.array(z.object({ name: z.string() })) });

export interface CRDDocument {
  readonly file: string;
  readonly name: string;
  readonly group: string;
  readonly plural: string;
  readonly servedVersions: readonly string[];
  /** The document exactly as read, so no schema keyword is lost on the way to the server. */
  readonly manifest: Record<string, unknown>;
}

const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** Files named directly, plus the `.yaml`/`.yml`/`.json` files of directories named (not recursive), sorted. */
export async function expandManifestPaths(pathsOrDirs: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of pathsOrDirs) {
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(path);
    } catch (error) {
      throw new Error(`CRD path ${path} cannot be read: ${errorMessage(error)}`, { cause: error });
    }
    if (!info.isDirectory()) {
      files.push(path);
      continue;
    }
    const entries = (await readdir(path)).filter((name) => MANIFEST_EXTENSIONS.has(extname(name))).sort();
    files.push(...entries.map((name) => join(path, name)));
  }
  return files;
}

/** Reads every CustomResourceDefinition document of the given files; anything else in them is an error. */
export async function readCRDs(files: readonly string[]): Promise<CRDDocument[]> {
  const crds: CRDDocument[] = [];
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    const documents = parseAllDocuments(text);
    for (const [index, document] of documents.entries()) {
      if (document.errors.length > 0) {
        throw new Error(`${file} (document ${index + 1}) is not valid YAML: ${document.errors[0]?.message}`);
      }
      const value: unknown = document.toJS();
      if (value === null || value === undefined) continue;
      const parsed = crdSchema.safeParse(value);
      if (!parsed.success) {
        throw new Error(
          `${file} (document ${index + 1}) is not an apiextensions.k8s.io/v1 CustomResourceDefinition: ${z.prettifyError(parsed.error)}`,
        );
      }
      crds.push({
        file,
        name: parsed.data.metadata.name,
        group: parsed.data.spec.group,
        plural: parsed.data.spec.names.plural,
        servedVersions: parsed.data.spec.versions.filter((v) => v.served).map((v) => v.name),
        manifest: value as Record<string, unknown>,
      });
    }
  }
  return crds;
}

async function applyCRD(kc: KubeConfig, crd: CRDDocument): Promise<void> {
  const response = await kubeRequest(kc, {
    method: 'PATCH',
    path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(crd.name)}?fieldManager=${FIELD_MANAGER}&force=true`,
    // JSON is YAML, and the raw body keeps every schema keyword.
    body: JSON.stringify(crd.manifest),
    contentType: 'application/apply-patch+yaml',
  });
  if (response.status < 200 || response.status >= 300) {
    throw new Error(`applying CRD ${crd.name} from ${crd.file} failed with HTTP ${response.status}: ${response.body}`);
  }
}

async function isEstablished(kc: KubeConfig, crd: CRDDocument): Promise<boolean> {
  const response = await kubeRequest(kc, {
    method: 'GET',
    path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(crd.name)}`,
  });
  if (response.status !== 200) return false;
  const conditions = crdStatusSchema.parse(JSON.parse(response.body)).status?.conditions ?? [];
  return conditions.some((c) => c.type === 'Established' && c.status === 'True');
}

/** Like envtest: established is not enough for clients that discover, so also wait for each served version. */
async function isDiscoverable(kc: KubeConfig, crd: CRDDocument): Promise<boolean> {
  for (const version of crd.servedVersions) {
    const response = await kubeRequest(kc, { method: 'GET', path: `/apis/${crd.group}/${version}` });
    if (response.status !== 200) return false;
    const { resources } = discoverySchema.parse(JSON.parse(response.body));
    if (!resources.some((r) => r.name === crd.plural)) return false;
  }
  return true;
}

export interface InstallCRDsOptions {
  /** How long to wait for all CRDs to be Established and discoverable (default 60 s). */
  timeoutMs?: number;
}

/**
 * Server-side applies (field manager `tally-testenv`) every CRD found in the files and directories given, then
 * waits until each is Established and served by discovery. Re-applying an unchanged CRD is a no-op.
 */
export async function installCRDs(
  kc: KubeConfig,
  pathsOrDirs: string[],
  options: InstallCRDsOptions = {},
): Promise<void> {
  const crds = await readCRDs(await expandManifestPaths(pathsOrDirs));
  if (crds.length === 0) throw new Error(`no CustomResourceDefinitions found in ${pathsOrDirs.join(', ')}`);
  await Promise.all(crds.map((crd) => applyCRD(kc, crd)));
  const timeoutMs = options.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  let pending = crds;
  while (pending.length > 0) {
    const ready = await Promise.all(
      pending.map(async (crd) => (await isEstablished(kc, crd)) && (await isDiscoverable(kc, crd))),
    );
    pending = pending.filter((_, index) => !ready[index]);
    if (pending.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(
        `CRDs not established and discoverable after ${timeoutMs} ms: ${pending.map((c) => `${c.name} (${c.file})`).join(', ')}`,
      );
    }
    await sleep(100);
  }
}
