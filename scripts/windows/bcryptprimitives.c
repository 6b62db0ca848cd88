/* Wine 8 has no bcryptprimitives.dll, which every Rust >= 1.78 Windows
 * program imports for ProcessPrng (std's random seed): qg's test binaries
 * and ruff.exe alike. This shim gives wine the one function, on top of
 * advapi32's RtlGenRandom (SystemFunction036). Windows itself has the real
 * DLL; the shim lives only in the test wine prefix (scripts/windows-tests.sh). */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    return SystemFunction036(data, (ULONG)length);
}
