#!/usr/bin/env bash
# Bundles an app's dist/main.js (run `pnpm build` first) and its dependencies into one ESM file with esbuild, the only
# code an app's image holds. Used by build.sh and by the apps' Dockerfiles.
# Usage: tools/ship/image/bundle.sh <app-dir> <out-file>
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 <app-dir> <out-file>" >&2; exit 2; }
SHIP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ESBUILD="$SHIP_DIR/node_modules/.bin/esbuild"
entry="$1/dist/main.js"
[ -x "$ESBUILD" ] || { echo "$0: esbuild is missing at $ESBUILD: run pnpm install" >&2; exit 1; }
[ -f "$entry" ] || { echo "$0: $entry is missing: run pnpm build first" >&2; exit 1; }
# Some CommonJS dependencies call require() for Node built-ins; an ESM bundle needs a require to give them.
"$ESBUILD" "$entry" --bundle --platform=node --target=node20 --format=esm \
  --outfile="$2" --legal-comments=none --log-level=error \
  --banner:js="import { createRequire as __tallyCreateRequire } from 'node:module'; const require = __tallyCreateRequire(import.meta.url);"
