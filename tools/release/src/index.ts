// What other workspace packages use of the release: the clusterctl repositories and assets a release ships, and the
// stand-in repository for the Cluster API providers around them (the lifecycle suites in e2e install from these).
export {
  appsVersion,
  type ClusterctlRepository,
  GRAFANA_DASHBOARD,
  IMAGE_REGISTRY,
  KUBECTL_PLUGIN_TARBALL,
  METAL3_CRDS_ASSET,
  RELEASED_PROVIDERS,
  type ReleasedProvider,
  STANDALONE_ASSETS,
  writeClusterctlRepository,
  writeKubectlPluginTarball,
  writeMetal3CRDsAsset,
  writeStandaloneAssets,
} from './artifacts.js';
export {
  CERT_MANAGER_STAND_IN_VERSION,
  certManagerStandInVersion,
  type StandInRepository,
  type StandInRepositoryOptions,
  writeStandInRepository,
} from './capi-stand-in.js';
export { type BuiltRelease, buildRelease, PREVIOUS_RELEASE, releaseCacheDir } from './previous-release.js';
