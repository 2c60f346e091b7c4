// The platform-level interrupt controller (kern/trap/plic.cc), which routes device
// interrupts to harts.
#pragma once

void plicinit();
void plicinithart();
int plic_claim();
void plic_complete(int irq);
