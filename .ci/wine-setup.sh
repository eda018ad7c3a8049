#!/usr/bin/env bash
# Sourced by .ci/windows.sh: wine 8 from Debian, a prefix with the two fixes Go
# programs need there (/work/shared/windows/README.md measured them), and the
# variables to run Windows test binaries. Idempotent: a second run reuses the
# prefix (6.5 s and ~700 MB to make). Needs root for apt-get.
#  - Go >= 1.24 loads bcryptprimitives.dll!ProcessPrng, which wine 8 lacks: a
#    4 KB stand-in built with mingw (it calls RtlGenRandom) goes in system32.
#  - wine 8 answers STATUS_NOT_IMPLEMENTED for FileDispositionInformationEx and
#    Go's os.RemoveAll falls back only on three other statuses, so every
#    t.TempDir() cleanup would fail: a go build -overlay adds it to the fallback.
set -euo pipefail
if ! command -v wine >/dev/null || ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	# wine64 alone lacks /usr/bin/wine and wineboot.
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wine wine64 gcc-mingw-w64-x86-64-win32 >/dev/null
fi
export WINEPREFIX=${WINEPREFIX:-${TMPDIR:-/tmp}/mcpshim-wine-$(id -u)} WINEDEBUG=-all
WINE_TOOLS=$WINEPREFIX/mcpshim
mkdir -p "$WINE_TOOLS/bin"
if [ ! -f "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" ]; then
	cat > "$WINE_TOOLS/bcp.c" <<'C'
#include <windows.h>
#include <ntsecapi.h>
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE p, SIZE_T n) {
    while (n) { ULONG k = n > 0x40000000 ? 0x40000000 : (ULONG)n;
        if (!RtlGenRandom(p, k)) return FALSE; p += k; n -= k; }
    return TRUE;
}
BOOL WINAPI DllMain(HINSTANCE h, DWORD r, LPVOID v) { return TRUE; }
C
	x86_64-w64-mingw32-gcc -O2 -shared -s -nostartfiles -Wl,--entry,DllMain -o "$WINE_TOOLS/bcryptprimitives.dll" "$WINE_TOOLS/bcp.c" -ladvapi32
	wineboot -i >/dev/null 2>&1
	cp "$WINE_TOOLS/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/"
fi
# go test runs windows/amd64 test binaries through go_windows_amd64_exec.
printf '#!/bin/sh\nexec wine "$@"\n' > "$WINE_TOOLS/bin/go_windows_amd64_exec"
chmod +x "$WINE_TOOLS/bin/go_windows_amd64_exec"
export PATH=$WINE_TOOLS/bin:$PATH
src=$(go env GOROOT)/src/internal/syscall/windows/at_windows.go
sed 's/\t\tSTATUS_NOT_SUPPORTED:  /\t\tSTATUS_NOT_SUPPORTED, NTStatus(0xC0000002):  /' "$src" > "$WINE_TOOLS/at_windows.go"
grep -q 'NTStatus(0xC0000002)' "$WINE_TOOLS/at_windows.go" || { echo "wine-setup: Go's at_windows.go changed; update the overlay" >&2; exit 1; }
printf '{"Replace":{"%s":"%s"}}\n' "$src" "$WINE_TOOLS/at_windows.go" > "$WINE_TOOLS/overlay.json"
export OVERLAY=$WINE_TOOLS/overlay.json
