import { clusterApiVersion, ETCD_VERSION, KUBERNETES_VERSION } from '@tally-ipam/testenv';

/**
 * Every pin of the kind lane beyond testenv's (Kubernetes, etcd, the Cluster API releases come from there). Changing anything
 * here changes a cache key, so the next run rebuilds.
 */

export const KIND_MODULE = 'sigs.k8s.io/kind';
export const KIND_VERSION = 'v0.30.0';
/** The CoreDNS kubeadm 1.34 deploys (cmd/kubeadm/app/constants: CoreDNSVersion). */
export const COREDNS_MODULE = 'github.com/coredns/coredns';
export const COREDNS_VERSION = 'v1.12.1';
/** The sandbox image tag kubeadm 1.34 lists; our own pause program (go/pause) is built under it. */
export const PAUSE_VERSION = '3.10.1';
/**
 * kubeadm 1.34.10 would ask for etcd 3.6.5-0; the node carries testenv's etcd pin instead (the same etcd the tests
 * run against), so the kind configuration tells kubeadm this tag (`etcd.local.imageTag`).
 */
export const ETCD_IMAGE_TAG = `${ETCD_VERSION.replace(/^v/, '')}-0`;

export const DEBIAN_SUITE = 'bookworm';
export const DEFAULT_DEBIAN_MIRROR = 'http://deb.debian.org/debian';

/** Bumped when the layout of a cache entry of this package changes. */
export const KIND_CACHE_FORMAT = 1;

/** The images the node's containerd holds, named as `kubeadm config images list` prints them. */
export const NODE_IMAGES = {
  apiserver: `registry.k8s.io/kube-apiserver:${KUBERNETES_VERSION}`,
  controllerManager: `registry.k8s.io/kube-controller-manager:${KUBERNETES_VERSION}`,
  scheduler: `registry.k8s.io/kube-scheduler:${KUBERNETES_VERSION}`,
  proxy: `registry.k8s.io/kube-proxy:${KUBERNETES_VERSION}`,
  etcd: `registry.k8s.io/etcd:${ETCD_IMAGE_TAG}`,
  coredns: `registry.k8s.io/coredns/coredns:${COREDNS_VERSION}`,
  pause: `registry.k8s.io/pause:${PAUSE_VERSION}`,
} as const;

/**
 * The name Cluster API's components YAML gives its core manager image, for a release (default: the run's, testenv's
 * `clusterApiVersion()`).
 */
export function capiManagerImage(capiVersion?: string): string {
  return `registry.k8s.io/cluster-api/cluster-api-controller:${clusterApiVersion(capiVersion)}`;
}

/** Repository of the node image; the tag is the Kubernetes version plus the cache key. */
export const NODE_IMAGE_REPOSITORY = 'tally-ipam/kind-node';
