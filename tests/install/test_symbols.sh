#!/usr/bin/env bash
# libattnvk.so and libattnvk.a define exactly the public API (issue #17):
# every global symbol they define is an attnvk_* function of attnvk.h, every
# function attnvk.h declares is there, and the SONAME carries the major version.
# usage: test_symbols.sh LIBATTNVK_SO LIBATTNVK_A ATTNVK_H
set -euo pipefail
so=$1 ar=$2 header=$3
for tool in nm readelf; do
  command -v $tool >/dev/null || { echo "SKIP: $tool not found"; exit 77; }
done
fail=0
declared=$(grep -oE '\battnvk_[a-z0-9_]+\(' "$header" | tr -d '(' | sort -u)

check() { # what, defined global symbols (one a line)
  local what=$1 syms=$2 stray missing
  stray=$(grep -vE '^attnvk_' <<<"$syms" | grep -vxE '_init|_fini|_edata|_end|__bss_start' || true)
  if [ -n "$stray" ]; then
    echo "FAIL: $what defines $(wc -l <<<"$stray") global symbol(s) outside attnvk_*:"; head -20 <<<"$stray"; fail=1
  fi
  stray=$(comm -13 <(echo "$declared") <(grep -E '^attnvk_' <<<"$syms" | sort -u))
  [ -z "$stray" ] || { echo "FAIL: $what exports attnvk_* not in attnvk.h:"; echo "$stray"; fail=1; }
  missing=$(comm -23 <(echo "$declared") <(sort -u <<<"$syms"))
  [ -z "$missing" ] || { echo "FAIL: $what lacks functions attnvk.h declares:"; echo "$missing"; fail=1; }
  echo "$what: $(grep -cE '^attnvk_' <<<"$syms") attnvk_* symbols"
}

check "$(basename "$so")" "$(nm -D --defined-only "$so" | awk '{print $NF}' | sed 's/@.*//')"
check "$(basename "$ar")" "$(nm -g --defined-only "$ar" | awk 'NF == 3 {print $3}')"

soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
case "$soname" in
  libattnvk.so.[0-9]*) echo "SONAME $soname" ;;
  *) echo "FAIL: SONAME is '$soname', want libattnvk.so.<major>"; fail=1 ;;
esac
if readelf -d "$so" | grep 'TEXTREL' >/dev/null; then echo "FAIL: text relocations (non-PIC code)"; fail=1; fi
[ $fail = 0 ] && echo "symbols ok"
exit $fail
