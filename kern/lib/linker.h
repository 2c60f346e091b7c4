// Addresses that the linker script (kern/kernel.ld) defines: where the parts of the kernel
// image begin and end. They are declared as arrays so that C++ code can take only their
// addresses; there is no object behind them.
#pragma once

extern "C" {
extern char kernel_start[];  // the first byte of the image: its text, at 0x80200000
extern char trampoline[];    // the page of trampoline.S (section trampsec), the text's last
extern char etext[];         // the end of the text, trampoline page included
extern char bss_start[];     // .bss, which kmain() clears, is [bss_start, bss_end)
extern char bss_end[];
extern const char ksyms_start[];  // the embedded symbol table (kern/lib/ksyms.h) is
extern const char ksyms_end[];    // [ksyms_start, ksyms_end)
extern char end[];                // the first address after the image: free RAM starts here
}
