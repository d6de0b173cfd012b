#!/usr/bin/env bash
# Run once on the CPU machine before using the H100 machine: fetches the
# loaders it lacks (../shared/device/fetch-debs.sh) plus the two libraries the
# attnvk binary links (cJSON, SQLite) into .gpu/debs, which gpu-env.sh unpacks.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
[ -f .gpu/gpu-env.sh ] || bash ../shared/device/fetch-debs.sh
(cd .gpu/debs && apt-get download libcjson1 libsqlite3-0 2>&1 | grep -v '^W:' || true)
ls .gpu/debs
