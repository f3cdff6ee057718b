/*
 * corpus._prefix: the inner loop of the title index's prefix join
 * (corpus.graph.link_index.Segment.title_candidates).
 *
 * Why C: a new day's ~40k bibliography titles read every posting of their prefix grams
 * (22M at 128 days of 1,000 papers; the number grows with the corpus), and of those only
 * about one in twenty passes the first signature bound. In numpy each bound is several
 * passes over arrays of millions of rows (gathers, minimum, maximum, xor, popcount,
 * compare, flatnonzero); here it is one pass over the postings, in the order they lie in
 * the memory-mapped file, and only the pairs that pass both bounds are written out.
 *
 * candidates(post_key, post_sig, post_row, sig, lo, hi, q_of, q_size, q_sig0, q_sig1,
 *            t, eps, mask, n) -> bytes of int64 pair codes q * n + r, in posting order
 *
 *   post_key int64[P], post_sig uint64[P], post_row int32[P]: the segment's postings;
 *   sig uint64[N * 2]: each item's two signature words; lo, hi, q_of int64[R]: the posting
 *   ranges of the query plan and the query row of each; q_size int64[Q], q_sig0, q_sig1
 *   uint64[Q]: the queries' set sizes and signature words; mask: the set size bits of a key.
 *
 * The bounds are the numpy code's, computed in the same order in IEEE double (no fast-math),
 * so the same pairs pass: need = t * (2 min(x, y) + max(x, y)) / (2 + t) - eps; first
 * x + y - popcount(q0 ^ e0) > 2 need, then min(x - |Q \ E|, y - |E \ Q|) > need over both
 * words, |A \ B| counted as popcount(a & ~b). Both sides of each test but need are integers,
 * so each becomes an integer bound, worked out once per set size y of a range (its keys are
 * sorted, so y changes rarely): a posting costs two loads, a popcount and a compare.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

static int get(PyObject *obj, Py_buffer *view, Py_ssize_t item, const char *name) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    if (view->len % item != 0) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes is not a whole number of %zd-byte items",
                     name, view->len, item);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* The smallest integer above v: for an integer k, k > v exactly when k >= floor(v) + 1. */
static inline int64_t above(double v) {
    int64_t k = (int64_t)v; /* toward zero; floor(v) is one less for a negative v with a fraction */
    return (double)k > v ? k : k + 1;
}

/* The hot loop. On x86-64 Linux it is compiled twice, with and without the POPCNT instruction,
 * and the loader picks the one the CPU runs (without it a popcount is a dozen instructions). */
#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && defined(__GNUC__) && \
    (!defined(__clang__) || __clang_major__ >= 14) /* clang has target_clones since 14 */
__attribute__((target_clones("popcnt", "default")))
#endif
static int scan(const int64_t *key, const uint64_t *post_sig, const int32_t *post_row, const uint64_t *sig,
                const int64_t *lo, const int64_t *hi, const int64_t *q_of, const int64_t *q_size,
                const uint64_t *q_sig0, const uint64_t *q_sig1, double t, double eps, int64_t mask, int64_t n,
                Py_ssize_t n_post, Py_ssize_t n_items, Py_ssize_t n_ranges, Py_ssize_t n_q, int64_t **out,
                Py_ssize_t *cap, Py_ssize_t *used) {
    for (Py_ssize_t i = 0; i < n_ranges; i++) {
        int64_t q = q_of[i];
        if (q < 0 || q >= n_q || lo[i] < 0 || hi[i] > n_post)
            return 1;
        int64_t x = q_size[q];
        uint64_t s0 = q_sig0[q], s1 = q_sig1[q];
        int64_t y_at = -1, first_max = 0, second_min = 0;
        for (int64_t j = lo[i]; j < hi[i]; j++) {
            int64_t y = key[j] & mask;
            if (y != y_at) { /* a range's keys share their gram: y ascends, so this is rare */
                int64_t small = x < y ? x : y, big = x < y ? y : x;
                double need = t * (double)(2 * small + big) / (2.0 + t) - eps;
                /* x + y - popcount > 2 need  <=>  popcount <= x + y - above(2 need) */
                first_max = x + y - above(2 * need);
                /* min(ub_q, ub_e) > need  <=>  min(ub_q, ub_e) >= above(need) */
                second_min = above(need);
                y_at = y;
            }
            if (__builtin_popcountll(s0 ^ post_sig[j]) > first_max)
                continue;
            int64_t r = post_row[j];
            if (r < 0 || r >= n_items)
                return 1;
            uint64_t e0 = sig[2 * r], e1 = sig[2 * r + 1];
            int64_t ub_q = x - __builtin_popcountll(s0 & ~e0) - __builtin_popcountll(s1 & ~e1);
            int64_t ub_e = y - __builtin_popcountll(e0 & ~s0) - __builtin_popcountll(e1 & ~s1);
            if ((ub_q < ub_e ? ub_q : ub_e) < second_min)
                continue;
            if (*used == *cap) {
                int64_t *grown = realloc(*out, 2 * *cap * sizeof(int64_t));
                if (!grown)
                    return 2;
                *out = grown;
                *cap *= 2;
            }
            (*out)[(*used)++] = q * n + r;
        }
    }
    return 0;
}

static PyObject *candidates(PyObject *self, PyObject *args) {
    PyObject *objs[10];
    double t, eps;
    long long mask, n;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOddLL", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4],
                          &objs[5], &objs[6], &objs[7], &objs[8], &objs[9], &t, &eps, &mask, &n))
        return NULL;
    static const char *names[10] = {"post_key", "post_sig", "post_row", "sig", "lo",
                                    "hi", "q_of", "q_size", "q_sig0", "q_sig1"};
    static const Py_ssize_t sizes[10] = {8, 8, 4, 8, 8, 8, 8, 8, 8, 8};
    Py_buffer v[10];
    int got = 0;
    PyObject *result = NULL;
    int64_t *out = NULL;
    for (; got < 10; got++)
        if (get(objs[got], &v[got], sizes[got], names[got]) < 0)
            goto done;
    const int64_t *key = v[0].buf, *lo = v[4].buf, *hi = v[5].buf, *q_of = v[6].buf, *q_size = v[7].buf;
    const uint64_t *post_sig = v[1].buf, *sig = v[3].buf, *q_sig0 = v[8].buf, *q_sig1 = v[9].buf;
    const int32_t *post_row = v[2].buf;
    Py_ssize_t n_post = v[0].len / 8, n_items = v[3].len / 16, n_ranges = v[4].len / 8, n_q = v[7].len / 8;
    if (v[1].len / 8 != n_post || v[2].len / 4 != n_post || v[5].len / 8 != n_ranges ||
        v[6].len / 8 != n_ranges || v[8].len / 8 != n_q || v[9].len / 8 != n_q) {
        PyErr_SetString(PyExc_ValueError, "candidates: arrays of mismatched lengths");
        goto done;
    }
    Py_ssize_t cap = 1 << 16, used = 0;
    out = malloc(cap * sizeof(int64_t));
    if (!out) {
        PyErr_NoMemory();
        goto done;
    }
    int bad;
    Py_BEGIN_ALLOW_THREADS
    bad = scan(key, post_sig, post_row, sig, lo, hi, q_of, q_size, q_sig0, q_sig1, t, eps, mask, n,
               n_post, n_items, n_ranges, n_q, &out, &cap, &used);
    Py_END_ALLOW_THREADS
    if (bad == 1)
        PyErr_SetString(PyExc_ValueError, "candidates: a range, query or row out of bounds");
    else if (bad == 2)
        PyErr_NoMemory();
    else
        result = PyBytes_FromStringAndSize((const char *)out, used * (Py_ssize_t)sizeof(int64_t));
done:
    free(out);
    for (int k = 0; k < got; k++)
        PyBuffer_Release(&v[k]);
    return result;
}

static PyMethodDef methods[] = {
    {"candidates", candidates, METH_VARARGS,
     "Pair codes q * n + r of the postings in the plan's ranges that pass both signature bounds."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_prefix",
                                    "The title index's prefix-join inner loop (see _prefix.c).", -1, methods};

PyMODINIT_FUNC PyInit__prefix(void) { return PyModule_Create(&module); }
