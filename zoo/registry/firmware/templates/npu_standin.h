/* npu_standin: a stand-in for the Ethos-U core driver's invoke, for QEMU (no NPU there).
   It implements the three driver functions ExecuTorch's EthosUBackend calls, checks what the
   backend hands it against the Vela program in the .pte, prints a record, and runs the program on
   npu_model, zoo's model of the NPU (not the NPU). */
#ifndef NPU_STANDIN_H_
#define NPU_STANDIN_H_
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
/* The pools the stand-in checks the base addresses against. */
void npu_standin_pools(const void *pte, size_t pte_len, const void *temp, size_t temp_len);
/* Number of failed checks so far (0: every call matched the Vela program). */
int npu_standin_failures(void);
/* Number of calls so far whose outputs npu_model did not compute (a command or mode it does not model). */
int npu_standin_not_computed(void);
#ifdef __cplusplus
}
#endif
#endif
