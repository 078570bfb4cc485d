import { spawnSync } from 'node:child_process';
import {
  COREDNS_VERSION,
  capiManagerImage,
  ETCD_IMAGE_TAG,
  ensureKindBinaries,
  KIND_VERSION,
  NODE_IMAGE_REPOSITORY,
  NODE_IMAGES,
  PAUSE_VERSION,
} from '@tally-ipam/kind';
import {
  CLUSTER_API_VERSION_ENV,
  DEFAULT_CLUSTER_API_VERSION,
  ETCD_VERSION,
  KUBERNETES_VERSION,
} from '@tally-ipam/testenv';
import { beforeAll, describe, expect, it } from 'vitest';
import { referencePage } from './support/readmes.js';

/**
 * The versions tools/kind/README.md names, against the pins of the code (tools/kind's and testenv's), and what it says
 * kubeadm asks for against the kubeadm tools/kind builds: a bumped pin turns this red until the README follows.
 */

const README = 'tools/kind/README.md';

/** The README's text with its line breaks as spaces: a sentence may wrap anywhere. */
function readmeText(): string {
  return referencePage(README).text.replace(/\s+/g, ' ');
}

const bare = (version: string): string => version.replace(/^v/, '');

/** A failure names the missing phrase, not the whole README. */
function expectPhrase(text: string, phrase: string): void {
  expect(text.includes(phrase), `${README} does not say "${phrase}"`).toBe(true);
}

/** Every three-part version the README may name: the pins, with and without their `v`. */
function pinnedVersions(kubeadmEtcdTag: string): Set<string> {
  const pins = [
    KUBERNETES_VERSION,
    ETCD_VERSION,
    DEFAULT_CLUSTER_API_VERSION,
    COREDNS_VERSION,
    KIND_VERSION,
    PAUSE_VERSION,
    ETCD_IMAGE_TAG,
    kubeadmEtcdTag,
  ];
  return new Set(pins.flatMap((pin) => [pin, bare(pin), `v${bare(pin)}`]));
}

describe(`${README}: its version pins`, () => {
  let kubeadmImages: string[] = [];

  beforeAll(async () => {
    const kind = await ensureKindBinaries((message) => console.error(`[kind-pins] ${message}`));
    // With an explicit version kubeadm asks no release server: the list is what its constants say.
    const listed = spawnSync(
      kind.paths.kubeadm,
      ['config', 'images', 'list', '--kubernetes-version', KUBERNETES_VERSION],
      { encoding: 'utf8', timeout: 60_000 },
    );
    if (listed.error) throw listed.error;
    if (listed.status !== 0) throw new Error(`kubeadm config images list exited ${listed.status}: ${listed.stderr}`);
    kubeadmImages = listed.stdout.split('\n').filter((line) => line.trim() !== '');
  }, 3_600_000);

  function kubeadmEtcdTag(): string {
    const etcd = kubeadmImages.find((image) => image.startsWith('registry.k8s.io/etcd:'));
    if (etcd === undefined) throw new Error(`kubeadm lists no etcd image: ${kubeadmImages.join(', ')}`);
    return etcd.slice('registry.k8s.io/etcd:'.length);
  }

  it("names testenv's Kubernetes, etcd and default Cluster API release", () => {
    const text = readmeText();
    expectPhrase(text, `Kubernetes ${KUBERNETES_VERSION}, etcd ${ETCD_VERSION}`);
    expectPhrase(text, `${DEFAULT_CLUSTER_API_VERSION} unless \`${CLUSTER_API_VERSION_ENV}\``);
    expectPhrase(text, `\`${capiManagerImage(DEFAULT_CLUSTER_API_VERSION).replace(/:[^:]+$/, ':<release>')}\``);
    expectPhrase(text, `(${DEFAULT_CLUSTER_API_VERSION} by default)`);
  });

  it("names tools/kind's CoreDNS, kind and node image pins", () => {
    const text = readmeText();
    expectPhrase(text, `CoreDNS ${COREDNS_VERSION}`);
    expectPhrase(text, `kind ${KIND_VERSION} (\`go install sigs.k8s.io/kind@${KIND_VERSION}\`)`);
    expectPhrase(text, `\`${NODE_IMAGE_REPOSITORY}:${KUBERNETES_VERSION}-<key>\``);
    expectPhrase(text, `\`${NODE_IMAGES.etcd}\``);
  });

  it('says what kubeadm would ask for, as the kubeadm built here lists it', () => {
    const text = readmeText();
    expectPhrase(text, `kubeadm ${bare(KUBERNETES_VERSION)} would ask for etcd \`${kubeadmEtcdTag()}\``);
    // The node's images are named as kubeadm lists them, but for etcd, whose tag is testenv's pin.
    const ours = Object.values(NODE_IMAGES).filter((image) => image !== NODE_IMAGES.etcd);
    const theirs = kubeadmImages.filter((image) => !image.startsWith('registry.k8s.io/etcd:'));
    expect([...ours].sort()).toEqual([...theirs].sort());
  });

  // Addresses (127.0.0.1) have four parts and are no versions.
  it('names no three-part version that is not a pin', () => {
    const pins = pinnedVersions(kubeadmEtcdTag());
    const named = [...readmeText().matchAll(/(?<![\w.])v?\d+\.\d+\.\d+(?:-\d+)?(?!\.?\d)/g)].map((match) => match[0]);
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((version) => !pins.has(version))).toEqual([]);
  });
});
