/*
 * corpus._tally: whitespace-token statistics of a paper's paragraphs, for peS2o.
 *
 * Why C: peS2o scores every whitespace token of every paper (about 8,000 per
 * paper). In Python each token costs an object, a dict lookup and a Counter
 * update; here a token is a slice of the paragraph's own buffer, hashed and
 * looked up in a table that lives as long as the process. Only a token never
 * seen before becomes a Python str, scored once by the Python callable given
 * to TokenTable (corpus.release.pes2o's word rule, the one definition of it), so the
 * numbers are the Python rule's numbers.
 *
 * TokenTable(score).tally(texts, run_of, runs) returns
 *   (tokens per run, log2 sum per run, words per run, top token, its count)
 * where tokens split exactly as str.split() does (Py_UNICODE_ISSPACE), the top
 * token is the most frequent one, case kept, the first seen among equals (as
 * collections.Counter.most_common does), and score(token) -> (float, int) gives
 * a token's summed log2 probability and number of words.
 *
 * collapse(text) and count_tokens(text) are " ".join(text.split()) and
 * len(text.split()) with the same whitespace rule, without making the tokens:
 * peS2o collapses every paragraph and counts the words of every released text.
 *
 * A table is not for two threads at once (corpus.release.pes2o keeps one per thread);
 * a second concurrent call raises RuntimeError instead of corrupting it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define EMPTY UINT32_MAX
#define DEFAULT_MAX_ENTRIES 1000000

typedef struct {
    uint64_t hash;
    uint32_t key_off; /* key = UTF-8 bytes (surrogates as 3 bytes) in the arena */
    uint32_t key_len;
    double log2p;
    int64_t words;
    uint32_t stamp; /* the call that last counted this token */
    uint32_t count; /* occurrences in that call */
} Entry;

typedef struct {
    uint32_t entry;
    Py_ssize_t text, start, end; /* first occurrence in the current call */
} Touched;

typedef struct {
    PyObject_HEAD
    PyObject *score;
    uint32_t *slots; /* open addressing, linear probing; entry index or EMPTY */
    size_t mask;
    Entry *entries;
    size_t n_entries, entries_cap, max_entries;
    char *arena;
    size_t arena_len, arena_cap;
    uint32_t stamp;
    Touched *touched;
    size_t n_touched, touched_cap;
    unsigned char *buf; /* UTF-8 of the current non-ASCII token */
    size_t buf_cap;
    int busy;
} TokenTable;

/* Py_UNICODE_ISSPACE for the ASCII range: \t \n \v \f \r, U+001C-U+001F, space. */
static unsigned char ascii_space[128];

static inline uint64_t
hash_bytes(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)n;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static int
grow(void **ptr, size_t *cap, size_t need, size_t item)
{
    if (need <= *cap)
        return 0;
    size_t cap2 = *cap ? *cap : 64;
    while (cap2 < need)
        cap2 *= 2;
    void *p = PyMem_Realloc(*ptr, cap2 * item);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    *ptr = p;
    *cap = cap2;
    return 0;
}

static int
table_init_slots(TokenTable *t, size_t cap)
{
    uint32_t *slots = PyMem_Malloc(cap * sizeof(uint32_t));
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    memset(slots, 0xff, cap * sizeof(uint32_t));
    PyMem_Free(t->slots);
    t->slots = slots;
    t->mask = cap - 1;
    return 0;
}

static int
table_clear(TokenTable *t)
{
    t->n_entries = 0;
    t->arena_len = 0;
    t->stamp = 0;
    return table_init_slots(t, 1 << 14);
}

static int
table_rehash(TokenTable *t)
{
    size_t cap = (t->mask + 1) * 2;
    if (table_init_slots(t, cap) < 0)
        return -1;
    for (size_t i = 0; i < t->n_entries; i++) {
        size_t s = t->entries[i].hash & t->mask;
        while (t->slots[s] != EMPTY)
            s = (s + 1) & t->mask;
        t->slots[s] = (uint32_t)i;
    }
    return 0;
}

/* Index of the entry for key (p, n), scoring it first when new; -1 on error. */
static Py_ssize_t
table_find(TokenTable *t, const unsigned char *p, size_t n, PyObject *text, Py_ssize_t start,
           Py_ssize_t end)
{
    uint64_t h = hash_bytes(p, n);
    size_t s = h & t->mask;
    for (;;) {
        uint32_t e = t->slots[s];
        if (e == EMPTY)
            break;
        Entry *en = &t->entries[e];
        if (en->hash == h && en->key_len == n && memcmp(t->arena + en->key_off, p, n) == 0)
            return e;
        s = (s + 1) & t->mask;
    }
    /* New token: the Python rule scores it once. */
    if (n > UINT32_MAX || t->arena_len + n > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "token table arena is full");
        return -1;
    }
    PyObject *tok = PyUnicode_Substring(text, start, end);
    if (!tok)
        return -1;
    PyObject *res = PyObject_CallOneArg(t->score, tok);
    Py_DECREF(tok);
    if (!res)
        return -1;
    double log2p;
    long long words;
    if (!PyTuple_Check(res) || PyTuple_GET_SIZE(res) != 2) {
        Py_DECREF(res);
        PyErr_SetString(PyExc_TypeError, "score(token) must return a (float, int) tuple");
        return -1;
    }
    log2p = PyFloat_AsDouble(PyTuple_GET_ITEM(res, 0));
    words = PyLong_AsLongLong(PyTuple_GET_ITEM(res, 1));
    Py_DECREF(res);
    if (PyErr_Occurred())
        return -1;
    if (grow((void **)&t->arena, &t->arena_cap, t->arena_len + n, 1) < 0
        || grow((void **)&t->entries, &t->entries_cap, t->n_entries + 1, sizeof(Entry)) < 0)
        return -1;
    memcpy(t->arena + t->arena_len, p, n);
    Entry *en = &t->entries[t->n_entries];
    en->hash = h;
    en->key_off = (uint32_t)t->arena_len;
    en->key_len = (uint32_t)n;
    en->log2p = log2p;
    en->words = words;
    en->stamp = 0;
    en->count = 0;
    t->arena_len += n;
    Py_ssize_t index = (Py_ssize_t)t->n_entries;
    t->slots[s] = (uint32_t)index;
    t->n_entries++;
    if (t->n_entries * 2 > t->mask + 1 && table_rehash(t) < 0)
        return -1;
    return index;
}

typedef struct {
    Py_ssize_t *tokens;
    double *sums;
    int64_t *words;
} Runs;

static int
count_token(TokenTable *t, const unsigned char *p, size_t n, PyObject *text, Py_ssize_t text_index,
            Py_ssize_t start, Py_ssize_t end, Runs *runs, Py_ssize_t run)
{
    Py_ssize_t e = table_find(t, p, n, text, start, end);
    if (e < 0)
        return -1;
    Entry *en = &t->entries[e];
    if (en->stamp != t->stamp) {
        if (grow((void **)&t->touched, &t->touched_cap, t->n_touched + 1, sizeof(Touched)) < 0)
            return -1;
        Touched *to = &t->touched[t->n_touched++];
        to->entry = (uint32_t)e;
        to->text = text_index;
        to->start = start;
        to->end = end;
        en->stamp = t->stamp;
        en->count = 0;
    }
    en->count++;
    runs->tokens[run]++;
    runs->sums[run] += en->log2p;
    runs->words[run] += en->words;
    return 0;
}

static inline size_t
put_utf8(unsigned char *o, Py_UCS4 c)
{
    if (c < 0x80) {
        o[0] = (unsigned char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (unsigned char)(0xc0 | (c >> 6));
        o[1] = (unsigned char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) { /* surrogates too: a key, never decoded */
        o[0] = (unsigned char)(0xe0 | (c >> 12));
        o[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
        o[2] = (unsigned char)(0x80 | (c & 0x3f));
        return 3;
    }
    o[0] = (unsigned char)(0xf0 | (c >> 18));
    o[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3f));
    o[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
    o[3] = (unsigned char)(0x80 | (c & 0x3f));
    return 4;
}

static int
tally_text(TokenTable *t, PyObject *text, Py_ssize_t ti, Runs *runs, Py_ssize_t run)
{
    if (PyUnicode_READY(text) < 0) /* legacy strings on 3.11; a no-op later */
        return -1;
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    if (PyUnicode_IS_ASCII(text)) {
        const unsigned char *s = PyUnicode_1BYTE_DATA(text);
        Py_ssize_t i = 0;
        for (;;) {
            while (i < len && ascii_space[s[i]])
                i++;
            if (i >= len)
                break;
            Py_ssize_t start = i;
            while (i < len && !ascii_space[s[i]])
                i++;
            if (count_token(t, s + start, (size_t)(i - start), text, ti, start, i, runs, run) < 0)
                return -1;
        }
        return 0;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t i = 0;
    for (;;) {
        while (i < len && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)))
            i++;
        if (i >= len)
            break;
        Py_ssize_t start = i;
        size_t n = 0;
        while (i < len) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            if (Py_UNICODE_ISSPACE(c))
                break;
            if (grow((void **)&t->buf, &t->buf_cap, n + 4, 1) < 0)
                return -1;
            n += put_utf8(t->buf + n, c);
            i++;
        }
        if (count_token(t, t->buf, n, text, ti, start, i, runs, run) < 0)
            return -1;
    }
    return 0;
}

static PyObject *
build_result(TokenTable *t, PyObject *texts, Runs *runs, Py_ssize_t n_runs)
{
    PyObject *tokens = PyList_New(n_runs), *sums = PyList_New(n_runs), *words = PyList_New(n_runs);
    PyObject *top = NULL, *result = NULL;
    if (!tokens || !sums || !words)
        goto done;
    for (Py_ssize_t r = 0; r < n_runs; r++) {
        PyObject *a = PyLong_FromSsize_t(runs->tokens[r]);
        PyObject *b = PyFloat_FromDouble(runs->sums[r]);
        PyObject *c = PyLong_FromLongLong(runs->words[r]);
        if (!a || !b || !c) {
            Py_XDECREF(a);
            Py_XDECREF(b);
            Py_XDECREF(c);
            goto done;
        }
        PyList_SET_ITEM(tokens, r, a);
        PyList_SET_ITEM(sums, r, b);
        PyList_SET_ITEM(words, r, c);
    }
    uint32_t best_count = 0;
    Touched *best = NULL;
    for (size_t k = 0; k < t->n_touched; k++) {
        uint32_t c = t->entries[t->touched[k].entry].count;
        if (c > best_count) {
            best_count = c;
            best = &t->touched[k];
        }
    }
    top = best ? PyUnicode_Substring(PyList_GET_ITEM(texts, best->text), best->start, best->end)
               : PyUnicode_FromStringAndSize("", 0);
    if (!top)
        goto done;
    result = Py_BuildValue("(OOOOk)", tokens, sums, words, top, (unsigned long)best_count);
done:
    Py_XDECREF(tokens);
    Py_XDECREF(sums);
    Py_XDECREF(words);
    Py_XDECREF(top);
    return result;
}

static PyObject *
TokenTable_tally(TokenTable *t, PyObject *args)
{
    PyObject *texts, *run_of;
    Py_ssize_t n_runs;
    if (!PyArg_ParseTuple(args, "O!O!n:tally", &PyList_Type, &texts, &PyList_Type, &run_of, &n_runs))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(texts);
    if (PyList_GET_SIZE(run_of) != n) {
        PyErr_SetString(PyExc_ValueError, "texts and run_of differ in length");
        return NULL;
    }
    if (n_runs < 0) {
        PyErr_SetString(PyExc_ValueError, "runs must be >= 0");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyUnicode_Check(PyList_GET_ITEM(texts, i))) {
            PyErr_Format(PyExc_TypeError, "texts[%zd] is not a str", i);
            return NULL;
        }
    }
    if (!t->slots || !t->score) {
        PyErr_SetString(PyExc_RuntimeError, "TokenTable.__init__ was not called");
        return NULL;
    }
    if (t->busy) {
        PyErr_SetString(PyExc_RuntimeError, "TokenTable is in use by another thread");
        return NULL;
    }
    Runs runs = {PyMem_Calloc(n_runs + 1, sizeof(Py_ssize_t)), PyMem_Calloc(n_runs + 1, sizeof(double)),
                 PyMem_Calloc(n_runs + 1, sizeof(int64_t))};
    PyObject *result = NULL;
    if (!runs.tokens || !runs.sums || !runs.words) {
        PyErr_NoMemory();
        goto done;
    }
    t->busy = 1;
    /* Forgetting tokens between calls changes no number, only what is cached. */
    if (t->n_entries > t->max_entries && table_clear(t) < 0)
        goto done;
    if (++t->stamp == 0) { /* wrapped: no entry may look counted in this call */
        for (size_t i = 0; i < t->n_entries; i++)
            t->entries[i].stamp = 0;
        t->stamp = 1;
    }
    t->n_touched = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t run = PyLong_AsSsize_t(PyList_GET_ITEM(run_of, i));
        if (run == -1 && PyErr_Occurred())
            goto done;
        if (run < 0 || run >= n_runs) {
            PyErr_Format(PyExc_ValueError, "run_of[%zd] = %zd is not in range(%zd)", i, run, n_runs);
            goto done;
        }
        if (tally_text(t, PyList_GET_ITEM(texts, i), i, &runs, run) < 0)
            goto done;
    }
    result = build_result(t, texts, &runs, n_runs);
done:
    t->busy = 0;
    PyMem_Free(runs.tokens);
    PyMem_Free(runs.sums);
    PyMem_Free(runs.words);
    return result;
}

static PyObject *
TokenTable_clear(TokenTable *t, PyObject *Py_UNUSED(ignored))
{
    if (t->busy) {
        PyErr_SetString(PyExc_RuntimeError, "TokenTable is in use by another thread");
        return NULL;
    }
    if (table_clear(t) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static Py_ssize_t
TokenTable_len(TokenTable *t)
{
    return (Py_ssize_t)t->n_entries;
}

static int
TokenTable_init(TokenTable *t, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"score", "max_entries", NULL};
    PyObject *score;
    Py_ssize_t max_entries = DEFAULT_MAX_ENTRIES;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|n:TokenTable", kwlist, &score, &max_entries))
        return -1;
    if (!PyCallable_Check(score)) {
        PyErr_SetString(PyExc_TypeError, "score must be callable");
        return -1;
    }
    if (max_entries < 1 || (size_t)max_entries > UINT32_MAX / 4) {
        PyErr_SetString(PyExc_ValueError, "max_entries out of range");
        return -1;
    }
    Py_INCREF(score);
    Py_XSETREF(t->score, score);
    t->max_entries = (size_t)max_entries;
    return table_clear(t);
}

static void
TokenTable_dealloc(TokenTable *t)
{
    Py_XDECREF(t->score);
    PyMem_Free(t->slots);
    PyMem_Free(t->entries);
    PyMem_Free(t->arena);
    PyMem_Free(t->touched);
    PyMem_Free(t->buf);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

/* Whitespace scanning shared by collapse() and count_tokens(): str.split()'s rule. */
static inline int
is_space_at(int kind, const void *data, Py_ssize_t i)
{
    Py_UCS4 c = PyUnicode_READ(kind, data, i);
    return c < 128 ? ascii_space[c] : Py_UNICODE_ISSPACE(c);
}

/* 0 when text is a ready str, else -1 with TypeError naming the function. */
static int
check_str(PyObject *text, const char *function)
{
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "%s() needs a str, not %.100s", function, Py_TYPE(text)->tp_name);
        return -1;
    }
    return PyUnicode_READY(text);
}

/* collapse(text) -> " ".join(text.split()), the same object when that changes nothing. */
static PyObject *
tally_collapse(PyObject *Py_UNUSED(module), PyObject *text)
{
    if (check_str(text, "collapse") < 0)
        return NULL;
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    /* Already collapsed: no whitespace at either end, and every whitespace run is one space. */
    int clean = len == 0 || (!is_space_at(kind, data, 0) && !is_space_at(kind, data, len - 1));
    if (clean && PyUnicode_IS_ASCII(text)) {
        const unsigned char *s = PyUnicode_1BYTE_DATA(text);
        for (Py_ssize_t i = 0; i < len; i++) {
            if (ascii_space[s[i]] && (s[i] != ' ' || ascii_space[s[i + 1]])) {
                clean = 0; /* s[i + 1] exists: the last character is not a space */
                break;
            }
        }
    }
    else if (clean) {
        for (Py_ssize_t i = 0; i < len; i++) {
            if (is_space_at(kind, data, i)
                && (PyUnicode_READ(kind, data, i) != ' ' || is_space_at(kind, data, i + 1))) {
                clean = 0;
                break;
            }
        }
    }
    if (clean)
        return Py_NewRef(text);
    PyObject *parts = PyUnicode_Split(text, NULL, -1);
    if (!parts)
        return NULL;
    PyObject *space = PyUnicode_FromOrdinal(' ');
    PyObject *joined = space ? PyUnicode_Join(space, parts) : NULL;
    Py_XDECREF(space);
    Py_DECREF(parts);
    return joined;
}

/* count_tokens(text) -> len(text.split()), without making the tokens. */
static PyObject *
tally_count_tokens(PyObject *Py_UNUSED(module), PyObject *text)
{
    if (check_str(text, "count_tokens") < 0)
        return NULL;
    Py_ssize_t len = PyUnicode_GET_LENGTH(text), n = 0;
    int prev_space = 1;
    if (PyUnicode_IS_ASCII(text)) {
        const unsigned char *s = PyUnicode_1BYTE_DATA(text);
        for (Py_ssize_t i = 0; i < len; i++) {
            int sp = ascii_space[s[i]];
            n += prev_space & !sp;
            prev_space = sp;
        }
    }
    else {
        int kind = PyUnicode_KIND(text);
        const void *data = PyUnicode_DATA(text);
        for (Py_ssize_t i = 0; i < len; i++) {
            int sp = is_space_at(kind, data, i);
            n += prev_space & !sp;
            prev_space = sp;
        }
    }
    return PyLong_FromSsize_t(n);
}

static PyMethodDef module_methods[] = {
    {"collapse", tally_collapse, METH_O,
     "collapse(text) -> ' '.join(text.split()); text itself when already in that form"},
    {"count_tokens", tally_count_tokens, METH_O, "count_tokens(text) -> len(text.split())"},
    {NULL},
};

static PyMethodDef TokenTable_methods[] = {
    {"tally", (PyCFunction)TokenTable_tally, METH_VARARGS,
     "tally(texts, run_of, runs) -> (tokens, log2_sums, words, top_token, top_count) per run"},
    {"clear", (PyCFunction)TokenTable_clear, METH_NOARGS, "Forget every cached token."},
    {NULL},
};

static PySequenceMethods TokenTable_as_sequence = {
    .sq_length = (lenfunc)TokenTable_len,
};

static PyTypeObject TokenTableType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "corpus._tally.TokenTable",
    .tp_basicsize = sizeof(TokenTable),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Whitespace tokens of paragraphs, counted and scored with a per-process cache.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)TokenTable_init,
    .tp_dealloc = (destructor)TokenTable_dealloc,
    .tp_methods = TokenTable_methods,
    .tp_as_sequence = &TokenTable_as_sequence,
};

static struct PyModuleDef tally_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "corpus._tally",
    .m_doc = "Whitespace-token statistics for peS2o (see corpus.release.pes2o).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__tally(void)
{
    for (int c = 0; c < 128; c++)
        ascii_space[c] = (unsigned char)Py_UNICODE_ISSPACE(c);
    if (PyType_Ready(&TokenTableType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&tally_module);
    if (!m)
        return NULL;
    Py_INCREF(&TokenTableType);
    if (PyModule_AddObject(m, "TokenTable", (PyObject *)&TokenTableType) < 0) {
        Py_DECREF(&TokenTableType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
