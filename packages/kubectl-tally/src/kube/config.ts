import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { Client } from '@tally-ipam/controller-kit/client';

export interface Connection {
  readonly client: Client;
  /** The namespace commands use without `-n`: the context's, else `default` (kubectl's rule). */
  readonly defaultNamespace: string;
  readonly context: string;
}

export interface ConnectionOptions {
  readonly kubeconfig?: string | undefined;
  readonly context?: string | undefined;
}

/**
 * The user's cluster, as kubectl finds it: `--kubeconfig`, else `KUBECONFIG` (a list of files, merged), else
 * `~/.kube/config`, else the in-cluster service account; `--context` picks a context of it. The client is only ever
 * used to read: the plugin acts with the user's own credentials and RBAC, so it must not change anything.
 */
export function connect(options: ConnectionOptions): Connection {
  const kubeConfig = new KubeConfig();
  if (options.kubeconfig !== undefined) {
    try {
      kubeConfig.loadFromFile(options.kubeconfig);
    } catch (error) {
      throw new Error(
        `cannot read --kubeconfig ${options.kubeconfig}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  } else {
    // client-node falls back to http://localhost:8080 when it finds nothing; kubectl refuses instead, and so does this.
    const named = process.env.KUBECONFIG !== undefined && process.env.KUBECONFIG !== '';
    const inCluster = process.env.KUBERNETES_SERVICE_HOST !== undefined;
    if (!named && !inCluster && !existsSync(join(homedir(), '.kube', 'config'))) {
      throw new Error('no kubeconfig: set KUBECONFIG, pass --kubeconfig, or create ~/.kube/config');
    }
    kubeConfig.loadFromDefault();
  }
  if (options.context !== undefined) {
    if (!kubeConfig.getContextObject(options.context)) {
      const known = kubeConfig.getContexts().map((context) => context.name);
      throw new Error(`context "${options.context}" is not in the kubeconfig (it has: ${known.join(', ') || 'none'})`);
    }
    kubeConfig.setCurrentContext(options.context);
  }
  const context = kubeConfig.getCurrentContext();
  if (!kubeConfig.getCurrentCluster()) {
    throw new Error('no cluster to talk to: set KUBECONFIG, pass --kubeconfig, or create ~/.kube/config');
  }
  const namespace = kubeConfig.getContextObject(context)?.namespace;
  return {
    client: new Client(kubeConfig, { fieldManager: 'kubectl-tally', requestTimeoutMs: 30_000 }),
    defaultNamespace: namespace !== undefined && namespace !== '' ? namespace : 'default',
    context,
  };
}
