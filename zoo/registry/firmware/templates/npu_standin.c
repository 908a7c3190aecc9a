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

/* Where the block after the one at byte `at` of the .pte starts: its header and `size` bytes of data, padded to
   16. 0 if that block's header and data do not lie inside the first `limit` bytes. In uint32_t, as on the 32-bit
   target, each step checked: rounding a size near 2**32 up to 16 wrapped to a step of 0, and the walk never ended. */
static uint32_t block_after(uint32_t at, uint32_t size, uint32_t limit)
{
    if (at > limit || limit - at < BLOCK_HEADER || size > limit - at - BLOCK_HEADER) return 0;
    uint32_t end = at + BLOCK_HEADER + size, pad = (16u - size % 16u) % 16u;
    return pad <= limit - end ? end + pad : limit;
}

/* The block of `name` in the stream at byte `at` of the .pte, its data inside the .pte (`*size` bytes), or NULL. */
static const unsigned char *block(uint32_t at, const char *name, uint32_t *size)
{
    uint32_t limit = pte_size > UINT32_MAX ? UINT32_MAX : (uint32_t)pte_size;
    while (at <= limit && limit - at >= BLOCK_HEADER) {
        const unsigned char *b = pte_base + at;
        uint32_t n = rd32(b + 16), next = block_after(at, n, limit);
        if (!next) break; /* its data runs past the .pte */
        if (strncmp((const char *)b, name, 16) == 0) {
            *size = n;
            return b;
        }
        if (strncmp((const char *)b, "vela_end_stream", 16) == 0) break;
        at = next;
    }
    return NULL;
}

/* elem_size times the six dimensions of an I/O record, saturated above 2**32 - 1. */
static uint64_t io_bytes(const unsigned char *io)
{
    uint64_t bytes = rd32(io + 24);
    for (int d = 0; d < 6; d++) {
        bytes *= rd32(io + 4u * (unsigned)d); /* both below 2**32 + 1: no overflow */
        if (bytes > UINT32_MAX) bytes = (uint64_t)UINT32_MAX + 1u;
    }
    return bytes;
}

/* The inputs or outputs block `b` of `size` bytes: a count, then that many 36-byte records (shape[6], elem_size,
   offset, region), each checked to lie in the scratch. A count the block cannot hold is a failed check. */
static void print_ios(const char *kind, const unsigned char *b, uint32_t size, const unsigned char *scratch,
                      uint32_t scratch_size)
{
    uint32_t count = b && size >= 4 ? rd32(b + BLOCK_HEADER) : 0;
    int fits = !b || (size >= 4 && count <= (size - 4u) / 36u);
    uint32_t bad = 0; /* each a failed check, recorded after this line (a record inside it broke its JSON) */
    printf("npu_standin {\"call\":%d,\"%s\":[", calls, kind);
    for (uint32_t i = 0; fits && i < count; i++) {
        const unsigned char *io = b + BLOCK_HEADER + 4 + 36u * i;
        uint64_t bytes = io_bytes(io);
        uint32_t offset = rd32(io + 28), region = rd32(io + 32);
        int ok = region == 1 && offset <= scratch_size && bytes <= scratch_size - offset;
        printf("%s{\"offset\":%" PRIu32 ",\"bytes\":%llu,\"region\":%" PRIu32 ",\"in_scratch\":%d,\"fnv1a\":\"%08" PRIx32 "\"",
               i ? "," : "", offset, (unsigned long long)bytes, region, ok, ok ? fnv1a(scratch + offset, (size_t)bytes) : 0u);
#if ZOO_NPU_STANDIN_BYTES /* every byte, in hex, for a test to run the same bytes on the host */
        printf(",\"hex\":\"");
        for (uint64_t k = 0; ok && k < bytes; k++) printf("%02x", scratch[offset + k]);
        printf("\"");
#endif
        printf("}");
        bad += !ok;
    }
    printf("]}\n");
    for (; bad; bad--) check(0, kind);
    if (!fits) {
        failures++;
        printf("npu_standin {\"call\":%d,\"check_failed\":\"%s\",\"count\":%" PRIu32 ",\"block_bytes\":%" PRIu32 "}\n",
               calls, kind, count, size);
    }
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
    size_t at = inside(cmd, (size_t)custom_data_size, pte_base, pte_size) ? (size_t)(cmd - pte_base) : 0;
    for (size_t back = BLOCK_HEADER; !stream && pte_size <= UINT32_MAX && back <= at; back += 16)
        if (strncmp((const char *)pte_base + at - back, "vela_bin_stream", 16) == 0) stream = pte_base + at - back;
    check(stream != NULL, "vela_bin_stream found");
    if (!stream) {
        not_computed++;
        return 0;
    }
    uint32_t from = (uint32_t)(stream - pte_base), c_size = 0, w_size = 0, s_size = 0, in_size = 0, out_size = 0;
    const unsigned char *c = block(from, "cmd_data", &c_size), *w = block(from, "weight_data", &w_size);
    const unsigned char *s = block(from, "scratch_size", &s_size);
    uint32_t scratch_size = s && s_size >= 4 ? rd32(s + BLOCK_HEADER) : 0;
    const unsigned char *scratch = (const unsigned char *)(uintptr_t)base_addr[1];
    const unsigned char *weights = (const unsigned char *)(uintptr_t)base_addr[0];
    check(c && cmd == c + BLOCK_HEADER && (uint32_t)custom_data_size == c_size, "command stream = cmd_data block");
    check(custom_data_size >= 4 && memcmp(cmd, "COP1", 4) == 0, "COP1 magic"); /* cmd is inside the .pte */
    check(w && weights == w + BLOCK_HEADER && base_addr_size[0] == w_size, "base 0 = weight_data block");
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
    /* The I/O is hashed only where the scratch the backend handed over holds it, whatever the payload claims. */
    uint32_t readable = !inside(scratch, base_addr_size[1], temp_base, temp_size) ? 0
                        : base_addr_size[1] < scratch_size ? (uint32_t)base_addr_size[1] : scratch_size;
    const unsigned char *inputs = block(from, "inputs", &in_size);
    print_ios("inputs", inputs, in_size, scratch, readable);
    int computed = run_model(cmd, (size_t)custom_data_size, base_addr, base_addr_size, scratch_size,
                             failures != failures_before);
    const unsigned char *outputs = block(from, "outputs", &out_size);
    print_ios("outputs", outputs, out_size, scratch, readable); /* as the model left them */
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
