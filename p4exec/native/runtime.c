/* p4exec native runtime: what every generated pipeline links (included textually by p4exec/native/cgen.py).
 *
 * Tables: the Python runtime (p4exec/runtime/tables.py) owns entries and decides every P4Runtime error; this is
 * only its lookup index, rebuilt from it after writes (p4exec/native/tables.py). Entries are grouped by mask
 * (tuple space): one open-addressing hash table per distinct mask. Exact/LPM tables take the first hit in group
 * order (longest prefix first); priority tables (ternary/optional) scan every group and keep the highest
 * priority, ties to the entry inserted first (the smallest sequence number), as p4exec.runtime.index does.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t u64;
#define P4N_MAXK 8
#define P4N_MAXA 16

typedef struct {
    u64 key[P4N_MAXK];        /* masked */
    int32_t prio;
    uint32_t seq;
    int32_t action;           /* index in the table's dispatch list; -1: group */
    int32_t group;            /* selector group index into the table's groups, -1 for a direct action */
    int32_t mg;               /* its mask group */
    u64 args[P4N_MAXA];
    u64 lo[P4N_MAXK], hi[P4N_MAXK];   /* range tables: bounds of range fields (others 0 .. ~0) */
} p4n_entry;

typedef struct {
    u64 mask[P4N_MAXK];
    uint32_t cap;             /* power of two */
    int32_t *slot;            /* entry index or -1 */
} p4n_mgroup;

typedef struct {
    int32_t action;
    u64 args[P4N_MAXA];
} p4n_member;

typedef struct {
    int nk;                   /* match key words */
    int prio_mode;
    int nent, capent;
    p4n_entry *ent;
    int ngroups;
    p4n_mgroup *groups;
    /* selector groups: members[off .. off+len) */
    int nsel;
    int32_t *sel_off, *sel_len;
    int nmem;
    p4n_member *mem;
    int32_t def_action;
    u64 def_args[P4N_MAXA];
    int rng;                  /* a table with range fields: every entry is checked (highest priority wins) */
} p4n_table;

static uint64_t p4n_hash_words(const u64 *k, int n) {
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < n; i++) { h ^= k[i]; h *= 1099511628211ULL; h ^= h >> 29; }
    return h;
}

p4n_table *p4n_table_new(int nk, int prio_mode) {
    p4n_table *t = calloc(1, sizeof *t);
    t->nk = nk; t->prio_mode = prio_mode; t->def_action = -1;
    return t;
}

void p4n_table_clear(p4n_table *t) {
    for (int g = 0; g < t->ngroups; g++) free(t->groups[g].slot);
    free(t->groups); free(t->ent); free(t->sel_off); free(t->sel_len); free(t->mem);
    int nk = t->nk, pm = t->prio_mode, rng = t->rng;
    memset(t, 0, sizeof *t);
    t->rng = rng;
    t->nk = nk; t->prio_mode = pm; t->def_action = -1;
}

void p4n_table_free(p4n_table *t) { p4n_table_clear(t); free(t); }

/* entries come in the order groups must be searched (longest prefix first for LPM), then sequence */
int p4n_table_add(p4n_table *t, const u64 *val, const u64 *mask, int32_t prio, uint32_t seq, int32_t action,
                  int32_t group, const u64 *args, int nargs) {
    if (t->nent == t->capent) {
        t->capent = t->capent ? 2 * t->capent : 16;
        t->ent = realloc(t->ent, (size_t)t->capent * sizeof *t->ent);
    }
    p4n_entry *e = &t->ent[t->nent];
    memset(e, 0, sizeof *e);
    for (int i = 0; i < t->nk; i++) e->key[i] = val[i] & mask[i];
    e->prio = prio; e->seq = seq; e->action = action; e->group = group;
    for (int i = 0; i < t->nk; i++) e->hi[i] = ~0ULL;
    for (int i = 0; i < nargs && i < P4N_MAXA; i++) e->args[i] = args[i];
    int g;
    for (g = 0; g < t->ngroups; g++)
        if (memcmp(t->groups[g].mask, mask, (size_t)t->nk * sizeof(u64)) == 0) break;
    if (g == t->ngroups) {
        t->groups = realloc(t->groups, (size_t)(t->ngroups + 1) * sizeof *t->groups);
        p4n_mgroup *G = &t->groups[t->ngroups++];
        memset(G, 0, sizeof *G);
        memcpy(G->mask, mask, (size_t)t->nk * sizeof(u64));
    }
    e->mg = g;
    return t->nent++;
}

/* build each mask group's hash table once all entries are in (entries remember their group) */
void p4n_table_finish(p4n_table *t) {
    for (int g = 0; g < t->ngroups; g++) {
        p4n_mgroup *G = &t->groups[g];
        int n = 0;
        for (int i = 0; i < t->nent; i++) if (t->ent[i].mg == g) n++;
        uint32_t cap = 8;
        while (cap < (uint32_t)(2 * n + 2)) cap <<= 1;
        free(G->slot);
        G->cap = cap;
        G->slot = malloc(cap * sizeof(int32_t));
        for (uint32_t i = 0; i < cap; i++) G->slot[i] = -1;
    }
    for (int i = 0; i < t->nent; i++) {
        p4n_entry *e = &t->ent[i];
        p4n_mgroup *G = &t->groups[e->mg];
        uint32_t h = (uint32_t)p4n_hash_words(e->key, t->nk) & (G->cap - 1);
        int placed = 0;
        while (G->slot[h] >= 0) {
            p4n_entry *o = &t->ent[G->slot[h]];
            if (memcmp(o->key, e->key, (size_t)t->nk * sizeof(u64)) == 0) {
                /* the same masked key twice (entries differing only in priority): keep the better one */
                if (e->prio > o->prio || (e->prio == o->prio && e->seq < o->seq)) G->slot[h] = i;
                placed = 1;
                break;
            }
            h = (h + 1) & (G->cap - 1);
        }
        if (!placed) G->slot[h] = i;
    }
}

/* the bounds of range field k of the entry added last (a range table) */
void p4n_table_range(p4n_table *t, int k, u64 lo, u64 hi) {
    t->rng = 1;
    t->ent[t->nent - 1].lo[k] = lo;
    t->ent[t->nent - 1].hi[k] = hi;
}

int p4n_table_group_of(p4n_table *t, const u64 *mask) {
    for (int g = 0; g < t->ngroups; g++)
        if (memcmp(t->groups[g].mask, mask, (size_t)t->nk * sizeof(u64)) == 0) return g;
    return -1;
}

void p4n_table_set_default(p4n_table *t, int32_t action, const u64 *args, int nargs) {
    t->def_action = action;
    memset(t->def_args, 0, sizeof t->def_args);
    for (int i = 0; i < nargs && i < P4N_MAXA; i++) t->def_args[i] = args[i];
}

void p4n_table_set_selectors(p4n_table *t, int nsel, const int32_t *off, const int32_t *len, int nmem,
                             const int32_t *actions, const u64 *args /* nmem * P4N_MAXA */) {
    free(t->sel_off); free(t->sel_len); free(t->mem);
    t->nsel = nsel;
    t->sel_off = malloc((size_t)(nsel + 1) * sizeof(int32_t));
    t->sel_len = malloc((size_t)(nsel + 1) * sizeof(int32_t));
    memcpy(t->sel_off, off, (size_t)nsel * sizeof(int32_t));
    memcpy(t->sel_len, len, (size_t)nsel * sizeof(int32_t));
    t->nmem = nmem;
    t->mem = malloc((size_t)(nmem + 1) * sizeof(p4n_member));
    for (int i = 0; i < nmem; i++) {
        t->mem[i].action = actions[i];
        memcpy(t->mem[i].args, args + (size_t)i * P4N_MAXA, P4N_MAXA * sizeof(u64));
    }
}

static inline const p4n_entry *p4n_find(const p4n_table *t, const u64 *key) {
    const p4n_entry *best = NULL;
    u64 mk[P4N_MAXK];
    if (t->rng) {
        for (int i = 0; i < t->nent; i++) {
            const p4n_entry *e = &t->ent[i];
            const u64 *m = t->groups[e->mg].mask;
            int k;
            for (k = 0; k < t->nk; k++)
                if ((key[k] & m[k]) != e->key[k] || key[k] < e->lo[k] || key[k] > e->hi[k]) break;
            if (k == t->nk && (!best || e->prio > best->prio || (e->prio == best->prio && e->seq < best->seq)))
                best = e;
        }
        return best;
    }
    for (int g = 0; g < t->ngroups; g++) {
        const p4n_mgroup *G = &t->groups[g];
        for (int k = 0; k < t->nk; k++) mk[k] = key[k] & G->mask[k];
        uint32_t h = (uint32_t)p4n_hash_words(mk, t->nk) & (G->cap - 1);
        while (G->slot[h] >= 0) {
            const p4n_entry *e = &t->ent[G->slot[h]];
            if (memcmp(e->key, mk, (size_t)t->nk * sizeof(u64)) == 0) {
                if (!t->prio_mode) return e;
                if (!best || e->prio > best->prio || (e->prio == best->prio && e->seq < best->seq)) best = e;
                break;
            }
            h = (h + 1) & (G->cap - 1);
        }
    }
    return best;
}

/* ---- hashes (p4exec/runtime/hashes.py) */
static uint16_t p4n_crc16_tab[256];
static uint32_t p4n_crc32_tab[256];
static int p4n_tabs_ready;
static void p4n_tabs(void) {
    for (int i = 0; i < 256; i++) {
        uint32_t c = (uint32_t)i, d = (uint32_t)i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xA001u : c >> 1;       /* CRC-16/ARC reflected */
        for (int k = 0; k < 8; k++) d = (d & 1) ? (d >> 1) ^ 0xEDB88320u : d >> 1;   /* CRC-32 reflected */
        p4n_crc16_tab[i] = (uint16_t)c;
        p4n_crc32_tab[i] = d;
    }
    p4n_tabs_ready = 1;
}
static inline u64 p4n_crc16(const uint8_t *p, int n) {
    uint16_t c = 0;
    for (int i = 0; i < n; i++) c = (uint16_t)((c >> 8) ^ p4n_crc16_tab[(c ^ p[i]) & 0xFF]);
    return c;
}
static inline u64 p4n_crc32(const uint8_t *p, int n) {
    uint32_t c = 0xFFFFFFFFu;
    for (int i = 0; i < n; i++) c = (c >> 8) ^ p4n_crc32_tab[(c ^ p[i]) & 0xFF];
    return c ^ 0xFFFFFFFFu;
}
static inline u64 p4n_csum16(const uint8_t *p, int n) {
    uint32_t s = 0;
    int i;
    for (i = 0; i + 1 < n; i += 2) s += ((uint32_t)p[i] << 8) | p[i + 1];
    if (i < n) s += (uint32_t)p[i] << 8;
    while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
    return (~s) & 0xFFFF;
}
static inline u64 p4n_xor16(const uint8_t *p, int n) {
    uint32_t s = 0;
    int i;
    for (i = 0; i + 1 < n; i += 2) s ^= ((uint32_t)p[i] << 8) | p[i + 1];
    if (i < n) s ^= (uint32_t)p[i] << 8;
    return s & 0xFFFF;
}
static inline u64 p4n_identity(const uint8_t *p, int n) {
    /* the first (up to) 8 bytes as a big-endian integer, as p4exec.runtime.hashes.identity */
    u64 v = 0;
    for (int i = 0; i < n && i < 8; i++) v = (v << 8) | p[i];
    return v;
}

/* the same hashes over two byte strings one after the other (a packed field list, then the payload) */
static inline u64 p4n_csum16_2(const uint8_t *a, int na, const uint8_t *b, uint32_t nb) {
    uint64_t s = 0;
    uint32_t k = 0;     /* byte position in the joined string: even bytes are the high half of a word */
    for (int i = 0; i < na; i++, k++) s += (k & 1) ? a[i] : (uint32_t)a[i] << 8;
    for (uint32_t i = 0; i < nb; i++, k++) s += (k & 1) ? b[i] : (uint32_t)b[i] << 8;
    while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
    return (~s) & 0xFFFF;
}
static inline u64 p4n_xor16_2(const uint8_t *a, int na, const uint8_t *b, uint32_t nb) {
    uint32_t s = 0, k = 0;
    for (int i = 0; i < na; i++, k++) s ^= (k & 1) ? a[i] : (uint32_t)a[i] << 8;
    for (uint32_t i = 0; i < nb; i++, k++) s ^= (k & 1) ? b[i] : (uint32_t)b[i] << 8;
    return s & 0xFFFF;
}
static inline u64 p4n_crc16_2(const uint8_t *a, int na, const uint8_t *b, uint32_t nb) {
    uint16_t c = 0;
    for (int i = 0; i < na; i++) c = (uint16_t)((c >> 8) ^ p4n_crc16_tab[(c ^ a[i]) & 0xFF]);
    for (uint32_t i = 0; i < nb; i++) c = (uint16_t)((c >> 8) ^ p4n_crc16_tab[(c ^ b[i]) & 0xFF]);
    return c;
}
static inline u64 p4n_crc32_2(const uint8_t *a, int na, const uint8_t *b, uint32_t nb) {
    uint32_t c = 0xFFFFFFFFu;
    for (int i = 0; i < na; i++) c = (c >> 8) ^ p4n_crc32_tab[(c ^ a[i]) & 0xFF];
    for (uint32_t i = 0; i < nb; i++) c = (c >> 8) ^ p4n_crc32_tab[(c ^ b[i]) & 0xFF];
    return c ^ 0xFFFFFFFFu;
}

/* field-list packing, BMv2's layout: values MSB first, concatenated, zero padding to a whole byte */
typedef struct { uint8_t b[256]; int bits; } p4n_pack;
static inline void p4n_put(p4n_pack *p, u64 x, int w) {
    uint8_t *q = p->b + (p->bits >> 3);
    int sh = p->bits & 7, nb = (sh + w + 7) >> 3;
    unsigned __int128 v = (unsigned __int128)(w >= 64 ? x : x & ((1ULL << w) - 1)) << (nb * 8 - sh - w);
    for (int i = nb - 1; i >= 0; i--) { q[i] |= (uint8_t)v; v >>= 8; }
    p->bits += w;
}
