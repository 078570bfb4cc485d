#!/usr/bin/env bash
# Builds an app's controller image without a Docker daemon or a base image:
#   1. bundle <app-dir>/dist/main.js (run `pnpm build` first) and its dependencies into one ESM file (bundle.sh);
#   2. assemble a root filesystem: the node binary, the shared libraries ldd names, the CA bundle, /etc/passwd and
#      /etc/group with the non-root user 65532, an empty /tmp, and the bundle as /app/main.mjs;
#   3. write it, in Node (dist/image-writer.js of this package: no umoci, skopeo, root or Docker daemon), as one
#      deterministic layer (sorted entries, fixed mtime, owner 0:0, normalised modes), an OCI image layout and a
#      docker-archive that `docker load` and `kind load image-archive` accept (entrypoint node /app/main.mjs, user
#      65532:65532). Same inputs, same digests.
#
# Usage: tools/ship/image/build.sh <app-dir> <image-name>     (each app's `pnpm image` runs it)
# Environment:
#   IMAGE_REF   reference stored in the archive   (default ghcr.io/tally-ipam/<image-name>:dev)
#   OUT_DIR     where the results go              (default <app-dir>/dist/image)
#   NODE_BIN    the node binary to ship           (default: the node on PATH; must be Node 20)
#   SOURCE_DATE_EPOCH  mtime of every entry and the config's `created` (default 0)
# Results: $OUT_DIR/<image-name>.tar (docker-archive), $OUT_DIR/oci (OCI layout), $OUT_DIR/inputs.sha256.
# The image is rebuilt only when its inputs (bundle, node binary, libraries, this script, the reference) change.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 <app-dir> <image-name>" >&2; exit 2; }
SHIP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
APP_DIR=$(cd "$1" && pwd)
IMAGE_NAME=$2
IMAGE_REF=${IMAGE_REF:-ghcr.io/tally-ipam/$IMAGE_NAME:dev}
OUT_DIR=${OUT_DIR:-$APP_DIR/dist/image}
ARCHIVE="$OUT_DIR/$IMAGE_NAME.tar"
NODE_BIN=$(readlink -f "${NODE_BIN:-$(command -v node)}")
started=$(date +%s)

step() { echo "[image $IMAGE_NAME $(($(date +%s) - started))s] $*" >&2; }
fail() {
  echo "tools/ship/image/build.sh: $*" >&2
  exit 1
}

WRITER="$SHIP_DIR/dist/image-writer.js"
for tool in ldd sha256sum; do
  command -v "$tool" >/dev/null || fail "$tool is not installed"
done
[ -f "$WRITER" ] || fail "$WRITER is missing: run pnpm build first"
node_major=$("$NODE_BIN" -p 'process.versions.node.split(".")[0]')
[ "$node_major" = 20 ] || fail "$NODE_BIN is Node $node_major; the image ships Node 20"

mkdir -p "$OUT_DIR"
work=$(mktemp -d "${TMPDIR:-/tmp}/tally-image-$IMAGE_NAME-XXXXXX")
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
mkdir -p "$rootfs"/{app,etc/ssl/certs,tmp,proc,dev,sys,usr/bin}

step "1/4 bundling $APP_DIR/dist/main.js with esbuild"
bash "$SHIP_DIR/image/bundle.sh" "$APP_DIR" "$rootfs/app/main.mjs"

step "2/4 root filesystem: node $("$NODE_BIN" --version), its libraries, CA certificates, user 65532"
cp "$NODE_BIN" "$rootfs/usr/bin/node"
libraries=$(ldd "$NODE_BIN" | awk '/=> \//{print $3} /^[ \t]*\/.*ld-linux/{print $1}')
[ -n "$libraries" ] || fail "ldd found no libraries for $NODE_BIN"
for library in $libraries; do cp -L --parents "$library" "$rootfs/"; done
cp -L /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$rootfs/etc/group"
chmod 1777 "$rootfs/tmp"
chmod 0755 "$rootfs/app" && chmod 0644 "$rootfs/app/main.mjs"

inputs=$(
  {
    sha256sum "$rootfs/app/main.mjs" "$rootfs/usr/bin/node" "${BASH_SOURCE[0]}" "$SHIP_DIR/image/bundle.sh" "$WRITER" |
      awk '{print $1}'
    for library in $libraries; do sha256sum "$library" | awk '{print $1}'; done
    echo "$IMAGE_REF ${SOURCE_DATE_EPOCH:-0}"
  } | sha256sum | awk '{print $1}'
)
if [ -f "$ARCHIVE" ] && [ "$(cat "$OUT_DIR/inputs.sha256" 2>/dev/null)" = "$inputs" ]; then
  step "inputs unchanged ($inputs): keeping $ARCHIVE"
  exit 0
fi
rm -f "$OUT_DIR/inputs.sha256"

step "3/4 OCI layout and docker-archive ($IMAGE_REF)"
rm -f "$ARCHIVE"
written=$(node "$WRITER" --rootfs "$rootfs" --out-dir "$OUT_DIR" --name "$IMAGE_NAME" --ref "$IMAGE_REF" \
  --label "org.opencontainers.image.title=tally-$IMAGE_NAME" \
  --label "org.opencontainers.image.source=https://github.com/tally-ipam/tally")
echo "$inputs" >"$OUT_DIR/inputs.sha256"

step "4/4 done: $ARCHIVE $(du -h "$ARCHIVE" | cut -f1)" \
  "(bundle $(du -h "$rootfs/app/main.mjs" | cut -f1), node $(du -h "$rootfs/usr/bin/node" | cut -f1)): $written"
echo "load it with: docker load -i $ARCHIVE   or   kind load image-archive $ARCHIVE" >&2
