import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

/** Where Kubernetes mounts a pod's service account (token, CA, namespace). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export type KubeConfigSource =
  | { readonly kind: 'file'; readonly path: string; readonly from: 'flag' | 'home' }
  | { readonly kind: 'env'; readonly paths: string }
  | { readonly kind: 'in-cluster' };

export interface KubeConfigEnvironment {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir: string;
  readonly serviceAccountDir: string;
  readonly exists: (path: string) => boolean;
}

/**
 * Decides where the kubeconfig comes from, in controller-runtime's order: `--kubeconfig`, then `$KUBECONFIG`, then
 * the in-cluster service account, then `~/.kube/config`. Throws when none is available, saying what was tried.
 */
export function resolveKubeConfigSource(
  flag: string | undefined,
  environment: KubeConfigEnvironment,
): KubeConfigSource {
  if (flag) return { kind: 'file', path: flag, from: 'flag' };
  const fromEnv = environment.env.KUBECONFIG;
  if (fromEnv) return { kind: 'env', paths: fromEnv };
  const inCluster =
    Boolean(environment.env.KUBERNETES_SERVICE_HOST) &&
    Boolean(environment.env.KUBERNETES_SERVICE_PORT) &&
    environment.exists(join(environment.serviceAccountDir, 'token'));
  if (inCluster) return { kind: 'in-cluster' };
  const home = join(environment.homeDir, '.kube', 'config');
  if (environment.exists(home)) return { kind: 'file', path: home, from: 'home' };
  throw new Error(
    `no kubeconfig found: pass --kubeconfig, set KUBECONFIG, run in a pod with a service account, or create ${home}`,
  );
}

/**
 * Whether this process was pointed at a cluster on purpose: `--kubeconfig`, `$KUBECONFIG` or the pod's service
 * account. `~/.kube/config` alone does not count, so a tool run on a workstation can refuse to act on whatever cluster
 * kubectl happens to point at (and, for instance, start a local one instead).
 */
export function kubeConfigNamedExplicitly(
  flag: string | undefined,
  environment: KubeConfigEnvironment = {
    env: process.env,
    homeDir: homedir(),
    serviceAccountDir: SERVICE_ACCOUNT_DIR,
    exists: existsSync,
  },
): boolean {
  try {
    const source = resolveKubeConfigSource(flag, environment);
    return !(source.kind === 'file' && source.from === 'home');
  } catch {
    return false;
  }
}

/** Loads the kubeconfig chosen by `resolveKubeConfigSource` for this process. */
export function loadKubeConfig(flag?: string): KubeConfig {
  const source = resolveKubeConfigSource(flag, {
    env: process.env,
    homeDir: homedir(),
    serviceAccountDir: SERVICE_ACCOUNT_DIR,
    exists: existsSync,
  });
  const kubeConfig = new KubeConfig();
  try {
    switch (source.kind) {
      case 'file':
        kubeConfig.loadFromFile(source.path);
        break;
      case 'env':
        // client-node merges a path list in KUBECONFIG the way kubectl does.
        kubeConfig.loadFromDefault();
        break;
      case 'in-cluster':
        kubeConfig.loadFromCluster();
        break;
    }
  } catch (error) {
    const where =
      source.kind === 'file' ? source.path : source.kind === 'env' ? `KUBECONFIG=${source.paths}` : 'in-cluster';
    throw new Error(`cannot load kubeconfig from ${where}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  if (!kubeConfig.getCurrentCluster()) {
    throw new Error(`kubeconfig has no cluster for its current context "${kubeConfig.getCurrentContext()}"`);
  }
  return kubeConfig;
}

/** The namespace of the pod this process runs in (the default Lease namespace), if running in a pod. */
export function readInClusterNamespace(serviceAccountDir: string = SERVICE_ACCOUNT_DIR): string | undefined {
  try {
    const namespace = readFileSync(join(serviceAccountDir, 'namespace'), 'utf8').trim();
    return namespace === '' ? undefined : namespace;
  } catch {
    return undefined;
  }
}
