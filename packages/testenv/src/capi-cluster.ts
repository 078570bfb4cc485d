import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';

/** The label Cluster API's secret cache selects on; a kubeconfig Secret without it is invisible to the manager. */
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
/** The Secret type Cluster API gives the Secrets it generates. */
export const CLUSTER_SECRET_TYPE = 'cluster.x-k8s.io/secret';

export interface ClusterKubeconfigSecretOptions {
  readonly namespace: string;
  readonly clusterName: string;
  /** The workload cluster's kubeconfig; for tests that use the management cluster as the workload, its own. */
  readonly kubeconfigYaml: string;
  /** The Cluster's UID: makes the Cluster the Secret's owner, so deleting the Cluster removes it (garbage collector). */
  readonly clusterUid?: string;
}

/**
 * Creates `<cluster>-kubeconfig` the way Cluster API's own tests do (`env.CreateKubeconfigSecret`): label
 * `cluster.x-k8s.io/cluster-name`, type `cluster.x-k8s.io/secret`, the kubeconfig under `data.value`. Cluster API's
 * ClusterCache connects through it once the Cluster's infrastructure is provisioned, and the Cluster controller does
 * not try to generate one from a `<cluster>-ca` Secret.
 */
export async function createClusterKubeconfigSecret(
  kc: KubeConfig,
  options: ClusterKubeconfigSecretOptions,
): Promise<void> {
  await kc.makeApiClient(CoreV1Api).createNamespacedSecret({
    namespace: options.namespace,
    body: {
      metadata: {
        name: `${options.clusterName}-kubeconfig`,
        labels: { [CLUSTER_NAME_LABEL]: options.clusterName },
        ownerReferences: options.clusterUid
          ? [
              {
                apiVersion: 'cluster.x-k8s.io/v1beta2',
                kind: 'Cluster',
                name: options.clusterName,
                uid: options.clusterUid,
              },
            ]
          : undefined,
      },
      type: CLUSTER_SECRET_TYPE,
      data: { value: Buffer.from(options.kubeconfigYaml, 'utf8').toString('base64') },
    },
  });
}
