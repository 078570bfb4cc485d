#!/usr/bin/env bash
# Builds the Tally kind node image offline: Debian bookworm root file systems from debootstrap, the Kubernetes
# component images from binaries built from the Go module proxy, all preloaded in the node's containerd.
# Run by @tally-ipam/kind (src/node-image.ts), which owns the cache, the lock and the progress lines; each step prints
# one "STEP <name>" line. Everything named below comes from the environment:
#
#   BIN_DIR        kubelet kubeadm kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy etcd
#                  coredns pause, all static binaries
#   WORK_DIR       empty scratch directory (removed by the caller)
#   DEBS_DIR       debootstrap's package cache, shared between builds
#   ROOTFS_DIR     debootstrapped root file systems as tarballs, shared between builds
#   MIRROR         Debian mirror for debootstrap
#   NODE_IMAGE     tag of the node image to create
#   BUILD_ID       unique suffix for this build's temporary Docker objects
#   KUBERNETES_VERSION  e.g. v1.34.10 (written to /kind/version)
#   IMAGE_APISERVER IMAGE_CONTROLLER_MANAGER IMAGE_SCHEDULER IMAGE_PROXY IMAGE_ETCD IMAGE_COREDNS IMAGE_PAUSE
#                  the image names the node's containerd must hold
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
: "${BIN_DIR:?}" "${WORK_DIR:?}" "${DEBS_DIR:?}" "${ROOTFS_DIR:?}" "${MIRROR:?}" "${NODE_IMAGE:?}" "${BUILD_ID:?}" "${KUBERNETES_VERSION:?}"
: "${IMAGE_APISERVER:?}" "${IMAGE_CONTROLLER_MANAGER:?}" "${IMAGE_SCHEDULER:?}" "${IMAGE_PROXY:?}" "${IMAGE_ETCD:?}"
: "${IMAGE_COREDNS:?}" "${IMAGE_PAUSE:?}"

step() { echo "STEP $*"; }

base_image="tally-kind-build/node-base:$BUILD_ID"
build_container="tally-kind-build-$BUILD_ID"
component_images=("$IMAGE_APISERVER" "$IMAGE_CONTROLLER_MANAGER" "$IMAGE_SCHEDULER" "$IMAGE_PROXY" "$IMAGE_ETCD"
  "$IMAGE_COREDNS" "$IMAGE_PAUSE")

cleanup() {
  docker rm -f "$build_container" >/dev/null 2>&1 || true
  docker rmi "$base_image" >/dev/null 2>&1 || true
  # The component images only travel inside the node image; leave no tags of them in the host's engine.
  docker rmi "${component_images[@]}" >/dev/null 2>&1 || true
}
trap cleanup EXIT

mkdir -p "$DEBS_DIR"
node_packages=systemd,systemd-sysv,containerd,runc,iptables,containernetworking-plugins,conntrack,iproute2,kmod,procps,util-linux,mount
proxy_packages=iptables,conntrack

# The root file systems depend only on the suite, the package lists and the mirror: kept as tarballs in ROOTFS_DIR
# (shared between builds) so a rebuild for new binaries or node files skips debootstrap.
rootfs_key=$(printf '%s\n' bookworm "$node_packages" "$proxy_packages" "$MIRROR" "slim-v1" | sha256sum | cut -c1-16)
mkdir -p "$ROOTFS_DIR"
node_tar=$ROOTFS_DIR/node-$rootfs_key.tar
proxy_tar=$ROOTFS_DIR/proxy-$rootfs_key.tar

# Docs, manuals, apt's lists and downloaded packages are of no use in an image.
slim() {
  rm -rf "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/usr/share/info/* "$1"/var/cache/apt/archives/*.deb \
    "$1"/var/lib/apt/lists/* "$1"/var/log/*.log
}

# Writes a tarball next to its final name and renames it, so a concurrent build never reads half of one.
save_rootfs() {
  tar -C "$1" --numeric-owner -cf "$2.tmp-$BUILD_ID" . && mv "$2.tmp-$BUILD_ID" "$2"
}

if [[ -f "$node_tar" && -f "$proxy_tar" ]]; then
  step "root file systems from the cache (key $rootfs_key)"
  mkdir -p "$WORK_DIR/node" "$WORK_DIR/proxy"
  tar -C "$WORK_DIR/node" --numeric-owner -xf "$node_tar"
  tar -C "$WORK_DIR/proxy" --numeric-owner -xf "$proxy_tar"
else
  step "debootstrap bookworm: node and kube-proxy root file systems"
  # One after the other: both share DEBS_DIR, and two debootstraps filling an empty package cache at once delete each
  # other's half-downloaded packages ("Retrying failed download" until one gives up). The second mostly reads what the
  # first downloaded.
  debootstrap --variant=minbase --cache-dir="$DEBS_DIR" --include="$node_packages" bookworm "$WORK_DIR/node" "$MIRROR" \
    >"$WORK_DIR/debootstrap-node.log" 2>&1 || { tail -n 30 "$WORK_DIR/debootstrap-node.log"; exit 1; }
  debootstrap --variant=minbase --cache-dir="$DEBS_DIR" --include="$proxy_packages" bookworm "$WORK_DIR/proxy" "$MIRROR" \
    >"$WORK_DIR/debootstrap-proxy.log" 2>&1 || { tail -n 30 "$WORK_DIR/debootstrap-proxy.log"; exit 1; }
  slim "$WORK_DIR/node"
  slim "$WORK_DIR/proxy"
  save_rootfs "$WORK_DIR/node" "$node_tar"
  save_rootfs "$WORK_DIR/proxy" "$proxy_tar"
fi

path_env='ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

# Imports a directory as a one-layer image.
import_dir() {
  local dir=$1 image=$2
  shift 2
  tar -C "$dir" --numeric-owner -c . | docker import --change "$path_env" "$@" - "$image" >/dev/null
}

# A root file system for a static binary: the binary, users for non-root images, and a /tmp.
static_root() {
  local dir=$1
  mkdir -p "$dir/etc" "$dir/tmp" "$dir/usr/local/bin"
  chmod 1777 "$dir/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$dir/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$dir/etc/group"
}

step "component images (${#component_images[@]})"
for component in kube-apiserver kube-controller-manager kube-scheduler etcd; do
  dir="$WORK_DIR/image-$component"
  static_root "$dir"
  install -m 0755 "$BIN_DIR/$component" "$dir/usr/local/bin/$component"
done
import_dir "$WORK_DIR/image-kube-apiserver" "$IMAGE_APISERVER" --change 'ENTRYPOINT ["/usr/local/bin/kube-apiserver"]'
import_dir "$WORK_DIR/image-kube-controller-manager" "$IMAGE_CONTROLLER_MANAGER" \
  --change 'ENTRYPOINT ["/usr/local/bin/kube-controller-manager"]'
import_dir "$WORK_DIR/image-kube-scheduler" "$IMAGE_SCHEDULER" --change 'ENTRYPOINT ["/usr/local/bin/kube-scheduler"]'
import_dir "$WORK_DIR/image-etcd" "$IMAGE_ETCD" --change 'ENTRYPOINT ["/usr/local/bin/etcd"]'

static_root "$WORK_DIR/image-coredns"
install -m 0755 "$BIN_DIR/coredns" "$WORK_DIR/image-coredns/coredns"
# Root, not upstream's non-root user: upstream gives /coredns the file capability cap_net_bind_service, which a
# docker-imported layer does not carry; kubeadm's Deployment drops every capability but NET_BIND_SERVICE anyway.
import_dir "$WORK_DIR/image-coredns" "$IMAGE_COREDNS" --change 'ENTRYPOINT ["/coredns"]'

static_root "$WORK_DIR/image-pause"
install -m 0755 "$BIN_DIR/pause" "$WORK_DIR/image-pause/pause"
import_dir "$WORK_DIR/image-pause" "$IMAGE_PAUSE" --change 'ENTRYPOINT ["/pause"]' --change 'USER 65535'

# kube-proxy programs iptables (nf_tables backend, as on the node) and needs the tools in its own image.
install -m 0755 "$BIN_DIR/kube-proxy" "$WORK_DIR/proxy/usr/local/bin/kube-proxy"
import_dir "$WORK_DIR/proxy" "$IMAGE_PROXY" --change 'ENTRYPOINT ["/usr/local/bin/kube-proxy"]'

docker save -o "$WORK_DIR/component-images.tar" "${component_images[@]}"

step "node root file system"
node=$WORK_DIR/node
cp -a "$here/node/." "$node/"
for binary in kubelet kubeadm kubectl; do install -m 0755 "$BIN_DIR/$binary" "$node/usr/bin/$binary"; done
echo "$KUBERNETES_VERSION" >"$node/kind/version"
ln -sf /etc/systemd/system/kubelet.service "$node/etc/systemd/system/multi-user.target.wants/kubelet.service"
# Units that make no sense in a node container (consoles, timers that would reach the network, fsck).
for unit in getty.target console-getty.service serial-getty@.service getty@.service apt-daily.timer \
  apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer systemd-timesyncd.service \
  systemd-firstboot.service systemd-networkd-wait-online.service; do
  ln -sf /dev/null "$node/etc/systemd/system/$unit"
done
# Logs go to the node container's journal in memory; the node's /var is a volume that is thrown away anyway.
mkdir -p "$node/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\n' >"$node/etc/systemd/journald.conf.d/10-volatile.conf"
rm -f "$node/etc/machine-id" && touch "$node/etc/machine-id"
import_dir "$node" "$base_image"

step "preloading the images into containerd"
docker run -d --privileged --name "$build_container" --tmpfs /run --tmpfs /tmp --entrypoint /usr/bin/containerd \
  "$base_image" >/dev/null
docker exec "$build_container" sh -c \
  'for i in $(seq 100); do [ -S /run/containerd/containerd.sock ] && ctr version >/dev/null 2>&1 && exit 0; sleep 0.2; done; exit 1' ||
  { docker logs "$build_container" 2>&1 | tail -n 20; exit 1; }
# Not unpacked: the build container's overlayfs root cannot hold overlay snapshots; containerd unpacks on first use.
# Pinned: the kubelet's image garbage collection must never remove them, they cannot be pulled back.
docker exec -i "$build_container" ctr --namespace=k8s.io images import --all-platforms --no-unpack - \
  <"$WORK_DIR/component-images.tar" >/dev/null
present=$(docker exec "$build_container" ctr --namespace=k8s.io images list --quiet)
for image in "${component_images[@]}"; do
  if ! grep -qxF "$image" <<<"$present"; then
    echo "ERROR: $image is missing from the node's containerd after the import; it holds: $present" >&2
    exit 1
  fi
  # containerd 1.6's `ctr images import` has no --label.
  docker exec "$build_container" ctr --namespace=k8s.io images label "$image" io.cri-containerd.pinned=pinned >/dev/null
done
docker stop --time 30 "$build_container" >/dev/null

step "docker commit"
# No STOPSIGNAL: `docker commit` cannot set it, and kind removes node containers with `docker rm -f` anyway.
docker commit \
  --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' \
  --change 'ENV container=docker' \
  "$build_container" "$NODE_IMAGE" >/dev/null
echo "BUILT $NODE_IMAGE"
