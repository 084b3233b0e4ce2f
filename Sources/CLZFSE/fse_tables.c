// FSE decoding tables from normalised frequencies, as Apple's reference spreads them
// (src/lzfse_fse.c, fse_init_decoder_table): a symbol of frequency f owns f consecutive
// states; each reads k or k-1 bits, where k is the shift that puts f << k in [N, 2N).
#include "fse_bits.h"

/// The `j`th of the `f` states of a symbol in a table of `n` states: how many bits it
/// reads and the base its next state adds them to. Every next state is below `n`.
static void spread(int n, int f, int j, int *bits, int *delta) {
    int k = __builtin_clz((unsigned)f) - __builtin_clz((unsigned)n);
    int j0 = ((2 * n) >> k) - f;  // the first states read k bits, the rest k - 1
    if (j < j0) {
        *bits = k;
        *delta = ((f + j) << k) - n;
    } else {
        *bits = k - 1;
        *delta = (j - j0) << (k - 1);
    }
}

/// The frequencies' sum if it is at most `n`, else -1.
static int checked_sum(int n, int n_symbols, const uint16_t *freq) {
    int sum = 0;
    for (int s = 0; s < n_symbols; s++) {
        sum += freq[s];
        if (sum > n) return -1;
    }
    return sum;
}

int fse_build_literal_table(int n_states, int n_symbols, const uint16_t *freq, fse_literal_entry *table) {
    int used = checked_sum(n_states, n_symbols, freq);
    if (used < 0) return 0;
    fse_literal_entry *t = table;
    for (int s = 0; s < n_symbols; s++) {
        for (int j = 0; j < freq[s]; j++, t++) {
            int bits, delta;
            spread(n_states, freq[s], j, &bits, &delta);
            t->bits = (uint8_t)bits;
            t->symbol = (uint8_t)s;
            t->delta = (int16_t)delta;
        }
    }
    memset(t, 0, (size_t)(n_states - used) * sizeof *t);
    return 1;
}

int fse_build_value_table(int n_states, int n_symbols, const uint16_t *freq, const uint8_t *extra,
                          const int32_t *base, fse_value_entry *table) {
    int used = checked_sum(n_states, n_symbols, freq);
    if (used < 0) return 0;
    fse_value_entry *t = table;
    for (int s = 0; s < n_symbols; s++) {
        for (int j = 0; j < freq[s]; j++, t++) {
            int bits, delta;
            spread(n_states, freq[s], j, &bits, &delta);
            t->total_bits = (uint8_t)(bits + extra[s]);
            t->value_bits = extra[s];
            t->delta = (int16_t)delta;
            t->value_base = base[s];
        }
    }
    memset(t, 0, (size_t)(n_states - used) * sizeof *t);
    return 1;
}
