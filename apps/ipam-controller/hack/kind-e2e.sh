#!/usr/bin/env bash
# Runs Tally the way users install it, on a kind cluster — now the e2e package's kind lane (e2e/README.md, "The kind
# lane"), which replaces what this script did before (a kindest/node image, cert-manager and `clusterctl init` pulled
# from registries; none of them reachable from the machines Tally is tested on):
#   a Docker engine (.ci/docker-engine.sh, started only when none answers) → the offline kind node image, kind, kubectl
#   and the Cluster API manager image (@tally-ipam/kind) → a kind cluster → both apps' daemonless images loaded →
#   Cluster API core, Tally and Sim installed from their components (serving certificates without cert-manager) →
#   the e2e suite and the leader-Pod chaos test against the Pods → the cluster deleted.
# Environment: TALLY_LANE_KEEP_ENGINE=1 leaves a Docker engine this script started running.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
step() { echo "=== $*" >&2; }

engine_started=
if ! docker info >/dev/null 2>&1; then
  step "Docker engine"
  bash "$ROOT/.ci/docker-engine.sh" start
  engine_started=1
fi
stop_engine() {
  if [ -n "$engine_started" ] && [ "${TALLY_LANE_KEEP_ENGINE:-}" != 1 ]; then bash "$ROOT/.ci/docker-engine.sh" stop; fi
}
trap stop_engine EXIT

step "install and build"
(cd "$ROOT" && pnpm install --frozen-lockfile && pnpm run build)
step "node image, kind, kubectl, Cluster API manager image"
node "$ROOT/tools/kind/dist/cli.js" prepare
step "the kind lane"
pnpm --dir "$ROOT" --filter @tally-ipam/e2e test:kind
