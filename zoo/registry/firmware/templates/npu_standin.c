/* npu_standin: replaces the Ethos-U core driver (not linked in this variant) with the three
   functions ExecuTorch's EthosUBackend_Cortex_M.cpp calls: ethosu_reserve_driver (through
   its weak ethosu_reserve_driver_ex), ethosu_invoke_v3 and ethosu_release_driver. Types come
   from the real driver header, so the signatures are the driver's own. The invoke checks the
   command stream and base addresses against the vela_bin_stream they come from, prints one
   JSON record per line ("npu_standin {...}"), then runs the command stream on npu_model, zoo's
   model of the NPU (a C port of its host interpreter; a model of the NPU, not the NPU), over the
   regions it was handed. A command or mode the model does not implement stops it with a
   "not_implemented" record, and that call's outputs are whatever the memory holds, marked not
   computed. It also overrides the backend's weak arm_ethos_io_memcpy to record each I/O copy. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <ethosu_driver.h>

#include "npu_model.h"
#include "npu_standin.h"

#define BLOCK_HEADER 32u /* VelaBinBlock: name[16], u32 size, u8 external, 11 reserved */

static const unsigned char *pte_base, *temp_base;
static size_t pte_size, temp_size;
static struct ethosu_driver standin_driver;
static int calls, failures, not_computed;
extern unsigned char *ethosu_fast_scratch; /* the backend's (weak) globals */
extern size_t ethosu_fast_scratch_size;

void npu_standin_pools(const void *pte, size_t pte_len, const void *temp, size_t temp_len)
{
    pte_base = pte, pte_size = pte_len, temp_base = temp, temp_size = temp_len;
}

int npu_standin_failures(void) { return failures; }

int npu_standin_not_computed(void) { return not_computed; }

struct ethosu_driver *ethosu_reserve_driver(void)
{
    standin_driver.reserved = true;
    return &standin_driver;
}

void ethosu_release_driver(struct ethosu_driver *drv)
{
    if (drv) drv->reserved = false;
}

static void check(int ok, const char *what)
{
    if (!ok) {
        failures++;
        printf("npu_standin {\"call\":%d,\"check_failed\":\"%s\"}\n", calls, what);
    }
}

static int inside(const unsigned char *p, size_t n, const unsigned char *base, size_t size)
{
    return base && p >= base && n <= size && (size_t)(p - base) <= size - n;
}

static uint32_t rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }

static uint32_t fnv1a(const unsigned char *p, size_t n)
{
    uint32_t h = 2166136261u;
    while (n--) h = (h ^ *p++) * 16777619u;
    return h;
}

/* The block of `name` in the stream at `s`, or NULL. */
static const unsigned char *block(const unsigned char *s, const char *name)
{
    const unsigned char *end = pte_base + pte_size;
    for (const unsigned char *b = s; b + BLOCK_HEADER <= end; b += BLOCK_HEADER + ((rd32(b + 16) + 15u) & ~15u)) {
        if (strncmp((const char *)b, name, 16) == 0) return b;
        if (strncmp((const char *)b, "vela_end_stream", 16) == 0) break;
    }
    return NULL;
}

static void print_ios(const char *kind, const unsigned char *b, const unsigned char *scratch, uint32_t scratch_size)
{
    int count = b ? (int)rd32(b + BLOCK_HEADER) : 0;
    printf("npu_standin {\"call\":%d,\"%s\":[", calls, kind);
    for (int i = 0; i < count; i++) {
        const unsigned char *io = b + BLOCK_HEADER + 4 + 36u * (unsigned)i; /* shape[6], elem_size, offset, region */
        uint32_t bytes = rd32(io + 24);
        for (int d = 0; d < 6; d++) bytes *= rd32(io + 4u * (unsigned)d);
        uint32_t offset = rd32(io + 28), region = rd32(io + 32);
        int ok = region == 1 && offset <= scratch_size && bytes <= scratch_size - offset;
        printf("%s{\"offset\":%" PRIu32 ",\"bytes\":%" PRIu32 ",\"region\":%" PRIu32 ",\"in_scratch\":%d,\"fnv1a\":\"%08" PRIx32 "\"}",
               i ? "," : "", offset, bytes, region, ok, ok ? fnv1a(scratch + offset, bytes) : 0u);
        check(ok, kind);
    }
    printf("]}\n");
}

/* `text` as the inside of a JSON string. */
static void print_json_text(const char *text)
{
    for (; *text; text++) {
        if (*text == '"' || *text == '\\') putchar('\\');
        putchar((unsigned char)*text < 0x20 ? ' ' : *text);
    }
}

/* The command stream on npu_model, region 1 being the payload's scratch_size bytes (as the host interpreter's).
   A malformed stream is a failed check; a mode the model lacks leaves the outputs not computed. */
static int run_model(const unsigned char *cmd, size_t cmd_size, uint64_t *const base_addr, const size_t *base_addr_size,
                     uint32_t scratch_size, int checks_failed)
{
    if (checks_failed) {
        printf("npu_standin {\"call\":%d,\"not_run\":\"a check failed\"}\n", calls);
        return 0;
    }
    unsigned char *base[3];
    size_t size[3] = {base_addr_size[0], scratch_size, base_addr_size[2]};
    for (int i = 0; i < 3; i++) base[i] = (unsigned char *)(uintptr_t)base_addr[i];
    char why[240];
    int ops = 0, kind = npu_model_run(cmd, cmd_size, base, size, &ops, why, sizeof why);
    if (kind == NPU_MODEL_COMPUTED) {
        printf("npu_standin {\"call\":%d,\"model\":\"computed by zoo's model of the NPU\",\"operations\":%d}\n", calls, ops);
        return 1;
    }
    if (kind == NPU_MODEL_STREAM_ERROR) failures++;
    printf("npu_standin {\"call\":%d,\"%s\":\"", calls, kind == NPU_MODEL_STREAM_ERROR ? "stream_error" : "not_implemented");
    print_json_text(why);
    printf("\",\"operations\":%d}\n", ops);
    return 0;
}

int ethosu_invoke_v3(struct ethosu_driver *drv, const void *custom_data_ptr, const int custom_data_size,
                     uint64_t *const base_addr, const size_t *base_addr_size, const int num_base_addr, void *user_arg)
{
    (void)user_arg;
    const unsigned char *cmd = custom_data_ptr;
    int failures_before = failures;
    check(drv == &standin_driver && drv->reserved, "driver reserved");
    check(num_base_addr == 3, "three base addresses");
    check(inside(cmd, (size_t)custom_data_size, pte_base, pte_size), "command stream inside the .pte");
    /* The stream this command stream belongs to: its vela_bin_stream header, 16-aligned, before it. */
    const unsigned char *stream = NULL;
    for (const unsigned char *p = cmd - BLOCK_HEADER; pte_base && p >= pte_base; p -= 16)
        if (strncmp((const char *)p, "vela_bin_stream", 16) == 0) { stream = p; break; }
    check(stream != NULL, "vela_bin_stream found");
    if (!stream) {
        not_computed++;
        return 0;
    }
    const unsigned char *c = block(stream, "cmd_data"), *w = block(stream, "weight_data");
    const unsigned char *s = block(stream, "scratch_size");
    uint32_t scratch_size = s ? rd32(s + BLOCK_HEADER) : 0;
    const unsigned char *scratch = (const unsigned char *)(uintptr_t)base_addr[1];
    const unsigned char *weights = (const unsigned char *)(uintptr_t)base_addr[0];
    check(c && cmd == c + BLOCK_HEADER && (uint32_t)custom_data_size == rd32(c + 16), "command stream = cmd_data block");
    check(memcmp(cmd, "COP1", 4) == 0, "COP1 magic");
    check(w && weights == w + BLOCK_HEADER && base_addr_size[0] == rd32(w + 16), "base 0 = weight_data block");
    check(inside(weights, base_addr_size[0], pte_base, pte_size), "weights inside the .pte");
    check(inside(scratch, base_addr_size[1], temp_base, temp_size), "scratch inside the temp pool");
    check(base_addr_size[1] >= scratch_size, "scratch at least the payload's scratch_size");
    check((base_addr[1] & 15u) == 0 && (uintptr_t)cmd % 16 == 0, "16-byte alignment");
    check(base_addr[2] == (uintptr_t)ethosu_fast_scratch && base_addr_size[2] == ethosu_fast_scratch_size,
          "base 2 = ethosu_fast_scratch");
    printf("npu_standin {\"call\":%d,\"stream_offset\":%u,\"cmd\":{\"addr\":\"0x%08" PRIxPTR "\",\"offset\":%u,\"size\":%d},"
           "\"bases\":[{\"addr\":\"0x%08lx\",\"size\":%u,\"pool\":\"pte\",\"offset\":%u},"
           "{\"addr\":\"0x%08lx\",\"size\":%u,\"pool\":\"temp\",\"offset\":%u,\"vela_scratch_size\":%" PRIu32 "},"
           "{\"addr\":\"0x%08lx\",\"size\":%u,\"pool\":\"fast_scratch\"}],"
           "\"pte\":{\"addr\":\"0x%08" PRIxPTR "\",\"size\":%u},\"temp\":{\"addr\":\"0x%08" PRIxPTR "\",\"size\":%u}}\n",
           calls, (unsigned)(stream - pte_base), (uintptr_t)cmd, (unsigned)(cmd - pte_base), custom_data_size,
           (unsigned long)base_addr[0], base_addr_size[0], (unsigned)(weights - pte_base),
           (unsigned long)base_addr[1], base_addr_size[1], (unsigned)(scratch - temp_base), scratch_size,
           (unsigned long)base_addr[2], base_addr_size[2], (uintptr_t)pte_base, pte_size, (uintptr_t)temp_base, temp_size);
    print_ios("inputs", block(stream, "inputs"), scratch, scratch_size);
    int computed = run_model(cmd, (size_t)custom_data_size, base_addr, base_addr_size, scratch_size,
                             failures != failures_before);
    print_ios("outputs", block(stream, "outputs"), scratch, scratch_size); /* as the model left them */
    not_computed += !computed;
    printf("npu_standin {\"call\":%d,\"result\":0,\"computed\":%s,\"failures\":%d}\n", calls,
           computed ? "true" : "false", failures);
    calls++;
    return 0; /* success: computed by the model, or marked not computed */
}

/* Overrides the backend's weak copy between the method's tensors and the NPU scratch. */
void arm_ethos_io_memcpy(void *dst, const void *src, size_t size)
{
    const unsigned char *d = dst, *s = src;
    const char *dir = inside(d, size, temp_base, temp_size) ? "to_scratch"
                    : inside(s, size, temp_base, temp_size) ? "from_scratch" : "other";
    memcpy(dst, src, size);
    printf("npu_standin {\"call\":%d,\"io_copy\":\"%s\",\"dst\":\"0x%08" PRIxPTR "\",\"src\":\"0x%08" PRIxPTR "\",\"bytes\":%u,\"fnv1a\":\"%08" PRIx32 "\"}\n",
           calls - (dir[0] == 'f'), dir, (uintptr_t)d, (uintptr_t)s, size, fnv1a(d, size));
}
