/* npu_standin.c on the host, for tests/firmware/test_npu_standin_host.py (gcc, -fsanitize=address,undefined; the
   driver's types from host_driver/ethosu_driver.h). Two modes:
     after AT SIZE LIMIT ...: block_after on each triple, one result per line (its 32-bit arithmetic);
     invoke PTE CMD_OFFSET CMD_SIZE WEIGHT_OFFSET WEIGHT_SIZE SCRATCH_SIZE: the bytes of PTE in a buffer of exactly
       their size, a temp pool of SCRATCH_SIZE bytes, and one ethosu_invoke_v3 as the backend makes it; the
       stand-in prints its records, then "failures N". */
#include "npu_standin.c"

#include <stdlib.h>

unsigned char *ethosu_fast_scratch;
size_t ethosu_fast_scratch_size;

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "after") == 0) {
        for (int i = 2; i + 2 < argc; i += 3)
            printf("%" PRIu32 "\n", block_after((uint32_t)strtoul(argv[i], NULL, 0), (uint32_t)strtoul(argv[i + 1], NULL, 0),
                                                (uint32_t)strtoul(argv[i + 2], NULL, 0)));
        return 0;
    }
    if (argc != 8 || strcmp(argv[1], "invoke") != 0) {
        fprintf(stderr, "usage: %s after AT SIZE LIMIT ... | invoke PTE CMD_OFFSET CMD_SIZE WEIGHT_OFFSET WEIGHT_SIZE "
                        "SCRATCH_SIZE\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[2], "rb");
    if (!f) { perror(argv[2]); return 2; }
    fseek(f, 0, SEEK_END);
    size_t size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *pte = malloc(size);
    if (!pte || fread(pte, 1, size, f) != size) { perror(argv[2]); return 2; }
    fclose(f);
    size_t scratch = strtoul(argv[7], NULL, 0);
    unsigned char *temp = aligned_alloc(16, (scratch + 15) / 16 * 16);
    memset(temp, 0, (scratch + 15) / 16 * 16);
    npu_standin_pools(pte, size, temp, scratch);
    uint64_t base[3] = {(uintptr_t)(pte + strtoul(argv[5], NULL, 0)), (uintptr_t)temp, 0};
    size_t base_size[3] = {strtoul(argv[6], NULL, 0), scratch, 0};
    struct ethosu_driver *drv = ethosu_reserve_driver();
    ethosu_invoke_v3(drv, pte + strtoul(argv[3], NULL, 0), (int)strtol(argv[4], NULL, 0), base, base_size, 3, NULL);
    ethosu_release_driver(drv);
    printf("failures %d\n", npu_standin_failures());
    free(temp);
    free(pte);
    return 0;
}
