/* Anchor: decode one LZFSE stream (a Record3D depth or confidence frame, or any file
 * pyliblzfse compressed) with Apple's reference decoder, lzfse_decode_buffer, REPS times a
 * run. Built by scripts/bench-lzfse.sh from the sources pyliblzfse 0.4.1 bundles.
 * usage: decode_lzfse FILE.lzfse [runs=7] [reps=100]
 * Prints one JSON line: median wall and CPU seconds of a run, MB/s of decoded output. */
#include "common.h"
#include "lzfse.h"

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s FILE.lzfse [runs] [reps]\n", argv[0]); return 2; }
    int runs = argc > 2 ? atoi(argv[2]) : 7, reps = argc > 3 ? atoi(argv[3]) : 100;
    double t = now_wall(); size_t n; unsigned char *in = read_file(argv[1], &n); double read_s = now_wall() - t;
    void *scratch = malloc(lzfse_decode_scratch_size());
    /* the decoded size (untimed): grow the buffer until the stream fits with room to spare */
    size_t cap = 4 * n + 4096, size;
    unsigned char *out = malloc(cap);
    while ((size = lzfse_decode_buffer(out, cap, in, n, scratch)) == cap) { cap *= 2; out = realloc(out, cap); }
    if (size == 0) { fprintf(stderr, "%s: not an LZFSE stream\n", argv[1]); return 1; }
    double checksum = 0;
    for (size_t i = 0; i < size; i++) checksum += out[i];
    double *wall = malloc(runs * sizeof *wall), *cpu = malloc(runs * sizeof *cpu);
    for (int k = 0; k < runs; k++) {
        double w0 = now_wall(), c0 = now_cpu();
        for (int r = 0; r < reps; r++)
            if (lzfse_decode_buffer(out, cap, in, n, scratch) != size) return 1;
        wall[k] = now_wall() - w0; cpu[k] = now_cpu() - c0;
    }
    print_json("lzfse_reference", "mem", argv[1], reps, (double)size * reps, (double)n * reps, read_s, wall, cpu, runs, checksum);
    return 0;
}
