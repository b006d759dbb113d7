/* A stand-in for Windows' bcryptprimitives.dll, which Debian's Wine 8 does
 * not have and which programs built by today's Rust load at start for
 * ProcessPrng (std's random numbers: HashMap keys, temp names). Only the
 * Wine prefix of the smoke suite (tests/windows/smoke) gets it; real
 * Windows has its own. ProcessPrng fills the buffer from RtlGenRandom
 * (advapi32's SystemFunction036), which Wine implements. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
