#!/usr/bin/env bash
# The SASS of an attnvk OpenCL program's entry (sm_90), built as regs.sh builds it (clang's PTX), with
# the instruction mix of each loop that holds tensor-core MMAs: a GPU-free look at what a change to a
# kernel body costs in instructions (static counts: a loop's cold branches count too).
#     bash tools/opencl-ptxas/sass.sh mma "-DAVK_D=128 ... -DAVK_HOOK_MODS=1" avk_flash_mma
# The CUDA 13 toolkit here has no disassembler, so this takes ptxas and cuobjdump from Debian 12's
# nvidia-cuda-toolkit (11.8, non-free; fetched once with apt-get download into $SASS_TOOLS, default
# /tmp/sass-tools, not installed) and lowers the PTX to its ISA 7.8 (no PTX 8 instructions in these
# programs). The full listing is $WORK/sass.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
prog=${1:?program: mma, decode or bwd}; options=${2:?build options}; entry=${3:?entry, e.g. avk_flash_mma}
work=${WORK:-/tmp/opencl-ptxas}; tools=${SASS_TOOLS:-/tmp/sass-tools}
if [ ! -x "$tools/x/usr/bin/cuobjdump" ]; then
  mkdir -p "$tools"
  list=/etc/apt/sources.list.d/attnvk-sass-nonfree.sources
  printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' > "$list"
  apt-get update -qq > /dev/null && (cd "$tools" && apt-get download -qq nvidia-cuda-toolkit > /dev/null) || true
  rm -f "$list"; apt-get update -qq > /dev/null || true
  deb=$(ls "$tools"/nvidia-cuda-toolkit_*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || { echo "sass.sh: could not fetch Debian's nvidia-cuda-toolkit (non-free)" >&2; exit 2; }
  dpkg -x "$deb" "$tools/x"
fi
WORK=$work bash "$root/tools/opencl-ptxas/regs.sh" "$prog" "$options" "$entry"
sed 's/^\.version .*/.version 7.8/' "$work/prog.ptx" > "$work/prog78.ptx"
"$tools/x/usr/bin/ptxas" -arch=sm_90 "$work/prog78.ptx" -o "$work/prog78.cubin"
"$tools/x/usr/bin/cuobjdump" -sass -fun "$entry" "$work/prog78.cubin" > "$work/sass.txt"
python3 - "$work/sass.txt" <<'PY'
import collections, re, sys
ins = [(int(m.group(1), 16), m.group(2)) for m in (re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;', l)
       for l in open(sys.argv[1])) if m]
op = lambda t: re.sub(r'^@!?U?P\w+\s+', '', t).split()[0].split('.')[0]
print(f"{len(ins)} instructions in all")
for s, e in sorted({(int(m.group(1), 16), a) for a, t in ins for m in [re.search(r'BRA .*?(0x[0-9a-f]+)', t)]
                    if m and int(m.group(1), 16) < a}):
    c = collections.Counter(op(t) for a, t in ins if s <= a <= e)
    if c.get('HMMA'):
        print(f"loop {s:#x}-{e:#x}: {sum(c.values())} instructions; " + ", ".join(f"{k} {v}" for k, v in c.most_common(20)))
PY
