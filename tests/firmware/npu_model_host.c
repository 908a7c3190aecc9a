/* npu_model.c and npu_mlw.c on the host, for tests/firmware/test_npu_model_host.py (built there with gcc and
   -fsanitize=address,undefined). Two modes:
     run CMD WEIGHTS SCRATCH FAST_SIZE OUT: the command stream in file CMD over region 0 (the bytes of WEIGHTS,
       in a buffer of exactly that size), region 1 (SCRATCH's bytes, the inputs in place) and region 2
       (FAST_SIZE zero bytes; none at all, a null base, for 0, as a firmware without a fast scratch hands it);
       prints "computed N", "not_implemented N WHY" or "stream_error N WHY" and writes region 1 to OUT.
     mlw STREAMS: each stream of the file (a 4-byte little-endian length, then the bytes) through
       npu_mlw_decode; prints one line per stream, "ok V0 V1 ..." or "refused CODE WHY". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_model.h"

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = n ? malloc((size_t)n) : NULL;
    if ((n && !data) || (n && fread(data, 1, (size_t)n, f) != (size_t)n)) { perror(path); exit(2); }
    fclose(f);
    *size = (size_t)n;
    return data;
}

static int run(char **argv)
{
    size_t cmd_size, size[3];
    unsigned char *cmd = slurp(argv[0], &cmd_size), *base[3];
    base[0] = slurp(argv[1], &size[0]);
    base[1] = slurp(argv[2], &size[1]);
    size[2] = strtoul(argv[3], NULL, 0);
    base[2] = size[2] ? calloc(size[2], 1) : NULL;
    char why[240];
    int ops = 0, kind = npu_model_run(cmd, cmd_size, base, size, &ops, why, sizeof why);
    static const char *const kinds[] = {"computed", "not_implemented", "stream_error"};
    printf("%s %d%s%s\n", kinds[kind], ops, kind ? " " : "", kind ? why : "");
    FILE *out = fopen(argv[4], "wb");
    if (!out || (size[1] && fwrite(base[1], 1, size[1], out) != size[1])) { perror(argv[4]); return 2; }
    fclose(out);
    for (int i = 0; i < 3; i++) free(base[i]);
    free(cmd);
    return 0;
}

static int16_t values[NPU_MODEL_WEIGHT_VALUES];

static int mlw(const char *path)
{
    size_t size, at = 0;
    unsigned char *data = slurp(path, &size);
    while (at + 4 <= size) {
        uint32_t n = (uint32_t)data[at] | (uint32_t)data[at + 1] << 8 | (uint32_t)data[at + 2] << 16 | (uint32_t)data[at + 3] << 24;
        at += 4;
        if (n > size - at) { fprintf(stderr, "a stream runs past the file\n"); return 2; }
        /* Each stream in a buffer of its own size, so that a read past it is ASan's error. */
        unsigned char *stream = malloc(n ? n : 1);
        memcpy(stream, data + at, n);
        char why[160];
        int got = npu_mlw_decode(stream, (int)n, values, NPU_MODEL_WEIGHT_VALUES, why, sizeof why);
        if (got < 0) {
            printf("refused %d %s\n", got, why);
        } else {
            printf("ok");
            for (int i = 0; i < got; i++) printf(" %d", values[i]);
            printf("\n");
        }
        free(stream);
        at += n;
    }
    free(data);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 7 && strcmp(argv[1], "run") == 0) return run(argv + 2);
    if (argc == 3 && strcmp(argv[1], "mlw") == 0) return mlw(argv[2]);
    fprintf(stderr, "usage: %s run CMD WEIGHTS SCRATCH FAST_SIZE OUT | mlw STREAMS\n", argv[0]);
    return 2;
}
