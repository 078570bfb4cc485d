#!/usr/bin/env bash
# Runs Tally the way users install it, on a kind cluster (needs Docker, kind, kubectl and clusterctl on PATH):
#   kind cluster → the daemonless image loaded into it → cert-manager + Cluster API + Tally through `clusterctl init`
#   from a local provider repository (this checkout's ipam-components.yaml and metadata.yaml) → the e2e suite
#   against the cluster through TALLY_TEST_KUBECONFIG.
# Environment: CLUSTER_NAME (tally), KIND_NODE_IMAGE (kindest/node:v1.34.0), CAPI_VERSION (v1.12.10),
#              IMAGE_REF (ghcr.io/tally-ipam/ipam-controller:dev), KEEP_CLUSTER=1 to keep the cluster afterwards.
set -euo pipefail

APP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=$(cd "$APP_DIR/../.." && pwd)
CLUSTER_NAME=${CLUSTER_NAME:-tally}
KIND_NODE_IMAGE=${KIND_NODE_IMAGE:-kindest/node:v1.34.0}
CAPI_VERSION=${CAPI_VERSION:-v1.12.10}
export IMAGE_REF=${IMAGE_REF:-ghcr.io/tally-ipam/ipam-controller:dev}
work=$(mktemp -d "${TMPDIR:-/tmp}/tally-kind-XXXXXX")
export KUBECONFIG="$work/kubeconfig"

step() { echo "=== $*" >&2; }
for tool in docker kind kubectl clusterctl pnpm; do
  command -v "$tool" >/dev/null || { echo "hack/kind-e2e.sh: $tool is not on PATH" >&2; exit 1; }
done
cleanup() {
  if [ "${KEEP_CLUSTER:-}" = 1 ]; then
    echo "cluster kept: export KUBECONFIG=$KUBECONFIG" >&2
  else
    kind delete cluster --name "$CLUSTER_NAME" >/dev/null 2>&1 || true
    rm -rf "$work"
  fi
}
trap cleanup EXIT

step "build and image"
(cd "$ROOT" && pnpm install --frozen-lockfile && pnpm turbo run build --filter=@tally-ipam/ipam-controller...)
bash "$APP_DIR/image/build.sh"

step "kind cluster $CLUSTER_NAME ($KIND_NODE_IMAGE)"
kind create cluster --name "$CLUSTER_NAME" --image "$KIND_NODE_IMAGE" --kubeconfig "$KUBECONFIG" --wait 120s
kind load image-archive "$APP_DIR/dist/image/ipam-controller.tar" --name "$CLUSTER_NAME"

step "local clusterctl repository for the ipam-tally provider"
version=v$(node -p "require('$APP_DIR/package.json').version")
repository="$work/repository/ipam-tally/$version"
(cd "$APP_DIR" && pnpm run --silent gen-components --out "$repository" --version "${version#v}" --image "$IMAGE_REF")
cat >"$work/clusterctl.yaml" <<YAML
providers:
  - name: tally
    type: IPAMProvider
    url: file://$repository/ipam-components.yaml
YAML

step "clusterctl init: cert-manager, Cluster API $CAPI_VERSION, Tally $version"
clusterctl init --config "$work/clusterctl.yaml" \
  --core "cluster-api:$CAPI_VERSION" --bootstrap "kubeadm:$CAPI_VERSION" --control-plane "kubeadm:$CAPI_VERSION" \
  --ipam "tally:$version" --wait-providers
kubectl -n tally-system rollout status deploy/tally-ipam-controller-manager --timeout=180s

step "e2e suite against the cluster"
TALLY_TEST_KUBECONFIG="$KUBECONFIG" pnpm --dir "$ROOT" --filter @tally-ipam/e2e test
