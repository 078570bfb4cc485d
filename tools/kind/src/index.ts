export { ensureKindBinaries, type KindBinaries, type KindBinaryName, kindBinariesBuild } from './binaries.js';
export {
  type BinaryImageArchive,
  type BinaryImageRequest,
  ensureBinaryImageArchive,
  type ImageBinary,
} from './binary-image.js';
export { type CapiManagerImageArchive, ensureCapiManagerImageArchive } from './capi-image.js';
export {
  type CreateKindClusterOptions,
  createKindCluster,
  type KindCluster,
  type KindConfigExtras,
  kindClusterConfig,
  loadImageArchive,
  nodeExec,
  OFFLINE_COREFILE,
} from './cluster.js';
export { ensureDockerEngine } from './docker.js';
export { ensureNodeImage, type NodeImage } from './node-image.js';
export { kindCacheDir } from './paths.js';
export { type PreparedKind, type PrepareKindOptions, type PrepareStep, prepareKind } from './prepare.js';
export {
  COREDNS_VERSION,
  capiManagerImage,
  ETCD_IMAGE_TAG,
  KIND_VERSION,
  NODE_IMAGE_REPOSITORY,
  NODE_IMAGES,
  PAUSE_VERSION,
} from './versions.js';
