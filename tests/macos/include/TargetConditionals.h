/* The one SDK header `cargo check --target *-apple-darwin` needs here:
 * ring's C code (the TLS library's crypto) includes it on Apple targets to
 * tell macOS from iOS. .ci/macos-check compiles that code with clang and
 * -nostdlibinc (ring's own switch for builds without a sysroot) and puts
 * this folder first, so no macOS SDK is needed. Only the macros ring
 * reads are defined: the build is macOS's. */
#ifndef TANDEM_TARGET_CONDITIONALS_H
#define TANDEM_TARGET_CONDITIONALS_H
#define TARGET_OS_MAC 1
#define TARGET_OS_OSX 1
#define TARGET_OS_IPHONE 0
#endif
