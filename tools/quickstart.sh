#!/usr/bin/env bash
# The main job from a clean clone: install what is missing, build, list every
# device, and run the quick bench on all of them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/tools/install-deps.sh"
bash "$root/tools/build.sh" build
"$root/build/attnvk" devices
"$root/build/attnvk" bench --suite quick
