/* The part of Arm's ethosu_driver.h that npu_standin.c uses, for tests/firmware/npu_standin_host.c. */
#ifndef ETHOSU_DRIVER_H
#define ETHOSU_DRIVER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ethosu_driver {
    bool reserved;
};

struct ethosu_driver *ethosu_reserve_driver(void);
void ethosu_release_driver(struct ethosu_driver *drv);
int ethosu_invoke_v3(struct ethosu_driver *drv, const void *custom_data_ptr, const int custom_data_size,
                     uint64_t *const base_addr, const size_t *base_addr_size, const int num_base_addr, void *user_arg);
#endif
