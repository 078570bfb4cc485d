export { type ControlPlaneBinaries, type EnsureBinariesOptions, ensureBinaries } from './binaries.js';
export {
  CAPI_CRD_GROUPS,
  type CapiCRDGroup,
  type CapiCRDOptions,
  capiCRDDir,
  capiCRDPaths,
  installCapiCRDs,
} from './capi.js';
export {
  type AdditionalAPIServer,
  type ControlPlane,
  type ControlPlaneOptions,
  startControlPlane,
} from './control-plane.js';
export { FIELD_MANAGER, type InstallCRDsOptions, installCRDs } from './crds.js';
export { buildKubeconfigYaml, kubeConfigFromYaml } from './kubeconfig.js';
export { createTestNamespace, TEST_NAMESPACE_LABEL, type TestNamespace } from './namespaces.js';
export { cacheRoot, controlPlaneCacheDir } from './paths.js';
export { ControlPlaneStartError } from './readiness.js';
export {
  CLUSTER_API_MODULE,
  CLUSTER_API_VERSION,
  ETCD_VERSION,
  GO_BUILD_TAGS,
  GO_LDFLAGS,
  KUBERNETES_VERSION,
} from './versions.js';
