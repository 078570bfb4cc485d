export { type Capv, type CapvTarget, capvWebhooksAnswer, type StartCapvOptions, startCapv } from './capv.js';
export { CAPV_BINARY, type CapvBinary, capvBuild, type EnsureCapvOptions, ensureCapv } from './capv-binary.js';
export {
  type CapvCrd,
  type CapvManifests,
  capvCrdManifest,
  type InstallCapvCRDsOptions,
  installCapvCRDs,
  readCapvManifests,
} from './capv-manifests.js';
export { type CapvMetadata, type CapvNicConfig, parseCapvMetadata } from './metadata.js';
export {
  ensureReferenceIpam,
  REFERENCE_BINARY,
  REFERENCE_CONTROLLER_COUNT,
  REFERENCE_MODULE,
  REFERENCE_POOL_API_VERSION,
  REFERENCE_RUN_FLAGS,
  REFERENCE_VERSION,
  type ReferenceIpam,
  type ReferenceIpamBinary,
  referenceIpamBuild,
  startedControllers,
  startReferenceIpam,
} from './reference-ipam.js';
export {
  type StartVcsimOptions,
  startVcsim,
  type Vcsim,
  type VcsimCredentials,
  type VcsimEndpoint,
  VcsimReadyLine,
  VcsimVm,
  vcsimCredentials,
} from './vcsim.js';
export { type EnsureVcsimOptions, ensureVcsim, VCSIM_BINARY, type VcsimBinary, vcsimBuild } from './vcsim-binary.js';
export {
  CAPV_MODULE,
  CAPV_RELEASES,
  type CapvRelease,
  type CapvVersion,
  capvRelease,
  capvVersionFor,
  DEFAULT_CAPV_VERSION,
  GOVMOMI_MODULE,
} from './versions.js';
