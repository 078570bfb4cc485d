export {
  parseRequestCounters,
  type RequestSeries,
  readRequestCounters,
  requestsBetween,
  requestsByTarget,
  requestTarget,
  sumRequests,
} from './api-server-requests.js';
export {
  type BenchTable,
  benchDate,
  describeMachine,
  mergeBenchTable,
  readBenchTable,
  renderBenchTable,
  writeBenchTable,
} from './bench-table.js';
export {
  type ControlPlaneBinaries,
  controlPlaneBuild,
  type EnsureBinariesOptions,
  ensureBinaries,
} from './binaries.js';
export {
  type CacheEntryRequest,
  type CacheEntryResult,
  commandOutput,
  ensureCacheEntry,
  type GoCommandOptions,
  PROGRESS_INTERVAL_MS,
  runGoCommand,
} from './build-cache.js';
export {
  CAPI_CRD_GROUPS,
  type CapiCRDGroup,
  type CapiCRDOptions,
  capiCoreConfigDir,
  capiCRDDir,
  capiCRDPaths,
  capiModuleDir,
  installCapiCRDs,
} from './capi.js';
export {
  CLUSTER_NAME_LABEL,
  CLUSTER_SECRET_TYPE,
  type ClusterKubeconfigSecretOptions,
  createClusterKubeconfigSecret,
} from './capi-cluster.js';
export {
  CLUSTERCTL_PACKAGE,
  type ClusterctlBinary,
  clusterctlBuild,
  clusterctlCacheDir,
  type EnsureClusterctlOptions,
  ensureClusterctl,
} from './capi-clusterctl.js';
export {
  CAPI_MANAGER_DEFAULT_FEATURE_GATES,
  type CapiManager,
  type CapiManagerOptions,
  startCapiManager,
} from './capi-manager.js';
export {
  type CapiManagerBinary,
  capiManagerBuild,
  type EnsureCapiManagerOptions,
  ensureCapiManager,
} from './capi-manager-binary.js';
export {
  CAPI_WEBHOOK_CONFIGURATION_NAMES,
  CAPI_WEBHOOK_FIELD_MANAGER,
  CAPI_WEBHOOK_SERVICE,
  CAPI_WEBHOOK_SERVICE_DNS_NAME,
  type CapiConversion,
  type CapiWebhookConfiguration,
  readCapiConversions,
  readCapiWebhookConfigurations,
} from './capi-webhooks.js';
export {
  createServingCertDir,
  generateServingCertificates,
  type PemKeyPair,
  type ServingCertDir,
  type ServingCertificates,
  type ServingNames,
} from './certs.js';
export { contractLabelProblems, metadataContract } from './contract.js';
export {
  type AdditionalAPIServer,
  type ControlPlane,
  type ControlPlaneOptions,
  startControlPlane,
} from './control-plane.js';
export { FIELD_MANAGER, type InstallCRDsOptions, installCRDs } from './crds.js';
export { errorMessage, formatBytes, formatDuration } from './format.js';
export { detectGo, downloadGoModule, type GoToolchain, goEnvironment } from './go.js';
export {
  ensureGoBinary,
  type GoBinaryEntry,
  type GoBinaryRequest,
  type GoBuildStep,
  type GoSource,
  goBinaryCacheKey,
  goBinaryKey,
  type NestedModule,
} from './go-binary.js';
export { buildKubeconfigYaml, kubeConfigFromYaml } from './kubeconfig.js';
export { createTestNamespace, TEST_NAMESPACE_LABEL, type TestNamespace } from './namespaces.js';
export { cacheRoot, capiManagerCacheDir, controlPlaneCacheDir } from './paths.js';
export { freePort } from './ports.js';
export { processCpuSeconds } from './process-cpu.js';
export type { ProcessExit } from './processes.js';
export { ControlPlaneStartError } from './readiness.js';
export { REFERENCE_IPAM_MODULE, REFERENCE_IPAM_VERSION, referenceIpamModuleDir } from './reference-ipam-module.js';
export {
  CLUSTER_API_MANAGER_BINARY,
  CLUSTER_API_MODULE,
  CLUSTER_API_RELEASES,
  CLUSTER_API_VERSION_ENV,
  type ClusterApiRelease,
  type ClusterApiVersion,
  clusterApiLdflags,
  clusterApiRelease,
  clusterApiVersion,
  DEFAULT_CLUSTER_API_VERSION,
  ETCD_VERSION,
  GO_BUILD_TAGS,
  GO_ENV,
  GO_LDFLAGS,
  KUBERNETES_VERSION,
  type KubernetesRange,
  OLDEST_CLUSTER_API_VERSION,
} from './versions.js';
export { eventually, forEachLimited, type WaitOptions, waitFor } from './wait.js';
export { startWatchedProcess, type WatchedProcess, type WatchedProcessOptions } from './watched-process.js';
export {
  deleteWebhookConfiguration,
  loopbackWebhookConfiguration,
  parseWebhookConfigurations,
  type RegisterWebhooksOptions,
  registerLoopbackWebhooks,
  type ShippedWebhook,
  type ShippedWebhookConfiguration,
  type WebhookConfigurationKind,
  type WebhookEndpoint,
  warningTexts,
} from './webhook-configurations.js';
