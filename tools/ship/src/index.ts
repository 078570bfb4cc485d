export {
  CERT_MANAGER_API_VERSION,
  discover,
  freeLoopbackPort,
  healthProbePort,
  type ImageController,
  ImageControllerExitedError,
  RBAC_KINDS,
  resourceKindOf,
  seedContainerTmp,
  serviceAccountKubeconfig,
  startImageController,
} from './cluster.js';
export {
  defaultManifests,
  type RenderOptions,
  renderComponents,
  runComponentsCli,
  runComponentsCliIfMain,
  type WrittenRelease,
  writeRelease,
} from './components.js';
export {
  BUILD_SCRIPT,
  buildImage,
  defaultImageOutDir,
  defaultImageRef,
  IMAGE_ENTRYPOINT,
  IMAGE_FILES,
  IMAGE_USER,
  type ImageConfig,
  imageArchivePath,
  imageFilesBesidesLibraries,
  type ProcessSecurity,
  readProcessSecurity,
  SANDBOX_SCRIPT,
  SHIP_DIR,
  startInSandbox,
  type UnpackedImage,
  unpackImage,
} from './image.js';
export { applyManifests, issueServingCertificates } from './install.js';
export {
  at,
  buildKustomization,
  CLUSTER_SCOPED_KINDS,
  isRecord,
  type Manifest,
  only,
  parseManifests,
} from './kustomize.js';
export {
  defineProvider,
  IMAGE_REGISTRY,
  PROVIDER_LABEL,
  type ProviderDeclaration,
  type ShippedProvider,
} from './provider.js';
export {
  INJECT_CA_FROM_ANNOTATION,
  type IssuedServingCertificate,
  type ServingCertificateRequest,
  servingCertificateRequests,
  withServingCertificateSecrets,
} from './serving-cert-secret.js';
export { findVariables, substituteVariables, type VariableReference } from './variables.js';
