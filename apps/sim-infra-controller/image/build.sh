#!/usr/bin/env bash
# The Sim infrastructure controller's image: tools/ship/image/build.sh for this app (see there and README.md).
# Environment: IMAGE_REF (ghcr.io/tally-ipam/sim-infra-controller:dev), OUT_DIR (dist/image), NODE_BIN.
set -euo pipefail
APP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exec bash "$APP_DIR/../../tools/ship/image/build.sh" "$APP_DIR" sim-infra-controller
