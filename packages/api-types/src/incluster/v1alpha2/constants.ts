/**
 * Names of the in-cluster IPAM provider's API (`sigs.k8s.io/cluster-api-ipam-provider-in-cluster` v1.1.0,
 * `api/v1alpha2`), which Tally can serve in its place. They are the reference's, unchanged: objects written by the
 * reference must keep meaning the same thing when Tally reads them, and the other way back.
 */

/** The group is Cluster API's IPAM group, shared with Tally's own pools and with IPAddress/IPAddressClaim. */
export const IN_CLUSTER_IPAM_GROUP = 'ipam.cluster.x-k8s.io';
export const IN_CLUSTER_V1ALPHA2_VERSION = 'v1alpha2';
export const IN_CLUSTER_V1ALPHA2_API_VERSION = `${IN_CLUSTER_IPAM_GROUP}/${IN_CLUSTER_V1ALPHA2_VERSION}`;

export const IN_CLUSTER_IP_POOL_KIND = 'InClusterIPPool';
export const GLOBAL_IN_CLUSTER_IP_POOL_KIND = 'GlobalInClusterIPPool';
export const IN_CLUSTER_PREFIX_POOL_KIND = 'InClusterPrefixPool';
export const GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND = 'GlobalInClusterPrefixPool';

export const IN_CLUSTER_IP_POOL_KINDS = [IN_CLUSTER_IP_POOL_KIND, GLOBAL_IN_CLUSTER_IP_POOL_KIND] as const;
export type InClusterIPPoolKind = (typeof IN_CLUSTER_IP_POOL_KINDS)[number];
export const IN_CLUSTER_PREFIX_POOL_KINDS = [IN_CLUSTER_PREFIX_POOL_KIND, GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND] as const;
export type InClusterPrefixPoolKind = (typeof IN_CLUSTER_PREFIX_POOL_KINDS)[number];

/**
 * Skips the delete check (pool still has IPAddresses) when present with any value: `clusterctl move` deletes the
 * source's pools while their addresses still exist (`webhooks.SkipValidateDeleteWebhookAnnotation`).
 */
export const IN_CLUSTER_SKIP_VALIDATE_DELETE_ANNOTATION = 'ipam.cluster.x-k8s.io/skip-validate-delete-webhook';

/** The reference's pool finalizer, held while the pool has IPAddresses; adoption must keep recognising it. */
export const IN_CLUSTER_PROTECT_POOL_FINALIZER = 'ipam.cluster.x-k8s.io/ProtectPool';
/** The reference's claim finalizer (`ipamutil.ReleaseAddressFinalizer`). */
export const IN_CLUSTER_RELEASE_ADDRESS_FINALIZER = 'ipam.cluster.x-k8s.io/ReleaseAddress';
/** The reference's IPAddress finalizer (`ipamutil.ProtectAddressFinalizer`). */
export const IN_CLUSTER_PROTECT_ADDRESS_FINALIZER = 'ipam.cluster.x-k8s.io/ProtectAddress';

/** clusterctl's provider name for the reference (its `clusterctl-settings.json`, `commonLabels` of config/default). */
export const IN_CLUSTER_PROVIDER_NAME = 'ipam-in-cluster';

/** Default `allocationPrefixLength` of the prefix pools (`+kubebuilder:default:=64`). */
export const IN_CLUSTER_DEFAULT_ALLOCATION_PREFIX_LENGTH = 64;
