/* Reset for QEMU's mps3-an547: enable the FPU and MVE, clear .bss, open newlib's
   semihosting handles, run main and exit with its status (SYS_EXIT_EXTENDED). */
#include <stdint.h>
#include <stdlib.h>

extern uint32_t __bss_start__, __bss_end__, __stack_top;
extern void initialise_monitor_handles(void);
int main(void);

void Reset_Handler(void);
void _init(void);
void _fini(void);
void Fault_Handler(void);

__attribute__((noreturn)) void Reset_Handler(void)
{
    volatile uint32_t *cpacr = (volatile uint32_t *)0xE000ED88u;
    *cpacr |= 0xFu << 20; /* CP10, CP11: full access */
    __asm volatile("dsb\n\tisb" ::: "memory");
    for (uint32_t *p = &__bss_start__; p < &__bss_end__; p++) *p = 0;
    initialise_monitor_handles();
    exit(main());
}

/* No crti/crtn (-nostartfiles): newlib's exit() still calls these. */
void _init(void) {}
void _fini(void) {}

__attribute__((noreturn)) void Fault_Handler(void)
{
    _Exit(99);
}

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)&__stack_top, Reset_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, Fault_Handler, 0, 0, 0, 0, Fault_Handler, Fault_Handler, 0,
    Fault_Handler, Fault_Handler,
};
