/* gen.c: native schedule generators: programs of chunk moves handed to the lowering pipeline. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "lower.h"
#include "ncclinfo.h"
#include "parse.h"
#include "util.h"
#include "verify.h"

/* A generator refuses its options with CS_ERR_USAGE and a message naming the option. */
#define usage(err, ...) cs_error_fail((err), CS_ERR_USAGE, "", 0, __VA_ARGS__)

/* in into o with the defaults every generator shares: the Simple protocol, an allreduce. */
static void shared_defaults(const struct cs_gen_opts *in, struct cs_gen_opts *o)
{
    *o = *in;
    if (o->proto == 0)
        o->proto = CS_PROTO_SIMPLE;
    if (o->coll == 0)
        o->coll = CS_COLL_ALLREDUCE;
}

static int common_opts(const struct cs_gen_opts *in, struct cs_gen_opts *o, int min_gpus,
                       struct cs_error *err)
{
    shared_defaults(in, o);
    if (o->instances == 0)
        o->instances = 1;
    if (o->coll < CS_COLL_ALLREDUCE || o->coll > CS_COLL_ALLTOALL)
        return usage(err, "--coll must be allreduce, allgather, reducescatter or alltoall");
    if (o->gpus < min_gpus)
        return usage(err, "--gpus must be at least %d (got %d)", min_gpus, o->gpus);
    if (o->gpus > (o->reps ? CS_GEN_MAX_REP_GPUS : 1024))
        return usage(err, "--gpus must be at most %d", o->reps ? CS_GEN_MAX_REP_GPUS : 1024);
    if (o->instances < 1)
        return usage(err, "--instances must be at least 1");
    if (o->instances > CS_MAX_CHANNELS)
        return usage(err, "--instances %d needs more than the runtime's %d channels", o->instances,
                     CS_MAX_CHANNELS);
    if (o->min_bytes < 0 || o->min_bytes > CS_GEN_MAX_WINDOW_BYTES || o->max_bytes < 0 ||
        o->max_bytes > CS_GEN_MAX_WINDOW_BYTES)
        return usage(err, "--min-bytes and --max-bytes must lie in 0..%lld",
                     CS_GEN_MAX_WINDOW_BYTES);
    if (o->sms < 0)
        return usage(err, "--sms must be at least 1");
    if (o->max_bytes != 0 && o->min_bytes > o->max_bytes)
        return usage(err, "--min-bytes %lld exceeds --max-bytes %lld (0 for no limit)",
                     o->min_bytes, o->max_bytes);
    return 0;
}

/* Lower, hold the result to the runtime's limits and to the threadblocks a GPU of o->sms SMs
 * (default A100's 108) keeps resident at the executor's one CTA per SM (src/verify.h: more hang
 * the runtime), and complete the <algo> header as the executor
 * requires it (Azure msccl-tools writes outofplace as the complement of inplace). */
static int finish_sched(struct cs_sched *s, const struct cs_gen_opts *o, struct cs_sched **out,
                        struct cs_error *err)
{
    struct cs_error e;
    char msg[256];

    cs_error_init(&e);
    if (cs_sched_check_limits(s, &e)) {
        cs_error_set(err, "", 0, "the generated schedule exceeds the runtime's limits: %s", e.msg);
        cs_sched_free(s);
        return CS_ERR_INVALID;
    }
    if (cs_verify_find_overfull(s, 0, o->sms ? o->sms : CS_VERIFY_GPU_SMS, CS_VERIFY_CTAS_PER_SM,
                                msg, sizeof(msg)) >= 0) {
        cs_error_set(err, "", 0, "%s (sms=N or --sms N for a GPU of N SMs)", msg);
        cs_sched_free(s);
        return CS_ERR_INVALID;
    }
    s->coll_exec_spelling = s->coll == CS_COLL_REDUCE_SCATTER; /* the executor's name */
    s->has_outofplace = s->has_min_bytes = s->has_max_bytes = 1;
    s->outofplace = !s->inplace;
    s->min_bytes = o->min_bytes;
    s->max_bytes = o->max_bytes;
    *out = s;
    return 0;
}

static int finish(struct cs_prog *prog, const struct cs_gen_opts *o, struct cs_sched **out,
                  struct cs_error *err)
{
    struct cs_sched *s = NULL;
    int rc = cs_prog_lower(prog, &s, err);

    cs_prog_free(prog);
    return rc ? rc : finish_sched(s, o, out, err);
}

static struct cs_ref ref(int rank, enum cs_buf buf, int index, int size)
{
    return (struct cs_ref){rank, buf, index, size};
}

/* An in-place allreduce program over o's GPUs with `chunks` chunks per buffer, manual tbs and
 * fusion; dependence_nop as the lowering option. NULL when out of memory. */
static struct cs_prog *allreduce_prog(const struct cs_gen_opts *o, const char *name, int chunks,
                                      int dependence_nop)
{
    struct cs_prog_opts po = {.name = name,
                              .coll = CS_COLL_ALLREDUCE,
                              .ngpus = o->gpus,
                              .in_chunks = chunks,
                              .inplace = 1,
                              .proto = o->proto,
                              .instances = o->instances,
                              .fusion = 1,
                              .dependence_nop = dependence_nop};

    return cs_prog_new(&po);
}

/* Before the lowering: a buffer of `chunks` chunks per instance, over o's instances, within the
 * runtime's int16_t chunk offsets (cs_sched_check_limits finds the same after the lowering, which
 * may by then have taken seconds and gigabytes). */
static int chunks_fit(const struct cs_gen_opts *o, long long chunks, const char *what,
                      struct cs_error *err)
{
    long long n = chunks * o->instances;

    if (n > 32767)
        return usage(err,
                     "%s: %lld chunks per buffer x %d instances = %lld, beyond the runtime's "
                     "int16_t chunk offsets (at most 32767)",
                     what, chunks, o->instances, n);
    return 0;
}

/* ---- hierarchical */

/* The channels of a GPU's connections to its column peers and to its row peers: one channel while
 * its R-1 + C-1 peers fit the runtime's 32 connections per channel, else column peers on one
 * and row peers on the next (each of R-1 and C-1 at most 32: 33 x 33 GPUs). */
struct hier_chans {
    int col, row;
};

static struct hier_chans hier_chans(int R, int C)
{
    return (struct hier_chans){0, R - 1 + C - 1 > 32 ? 1 : 0};
}

/* Whether the split layout runs its row reductions on the send tb of the second column peer
 * rather than the first: where the peers spread over two channels (hier_chans) and a column has
 * a second peer. The first column peer's send tb then holds its send, the R-1 column reductions,
 * the C-2 nops before its column all-gather send (which waits on the C-1 row all-gather receives)
 * and that send: R + C - 1 steps, 63 at 32 x 32, within the executor's 64; with the row
 * reductions too it would hold 2C + R - 3. */
static int spread_reductions(int R, int C)
{
    return hier_chans(R, C).row != hier_chans(R, C).col && R > 2;
}

/* The hierarchical phases every layout shares, on G ranks in columns of R, column part B chunks,
 * row part P chunks, connections on channels ch. Reduce-scatter inside each column: part pq of
 * every rank to rank pq's scratch. */
static void column_scatter(struct cs_prog *prog, int G, int R, int B, int ch)
{
    for (int r = 0; r < G; r++) {
        int c = r / R, p = r % R;

        for (int pq = 0; pq < R; pq++) {
            int q = c * R + pq, slot = p < pq ? p : p - 1;

            if (pq != p)
                cs_prog_copy(prog, ref(r, CS_BUF_INPUT, pq * B, B),
                             ref(q, CS_BUF_SCRATCH, slot * B, B), q, r, ch);
        }
    }
}

/* Reduce-scatter across each row: row part c' of the column part to rank (c', p)'s scratch,
 * after the column slots. */
static void row_scatter(struct cs_prog *prog, int G, int R, int C, int B, int P, int ch)
{
    for (int r = 0; r < G; r++) {
        int c = r / R, p = r % R;

        for (int cq = 0; cq < C; cq++) {
            int q = cq * R + p, slot = c < cq ? c : c - 1;

            if (cq != c)
                cs_prog_copy(prog, ref(r, CS_BUF_INPUT, p * B + cq * P, P),
                             ref(q, CS_BUF_SCRATCH, (R - 1) * B + slot * P, P), q, r, ch);
        }
    }
}

/* All-gather across rows, then inside columns. */
static void gather(struct cs_prog *prog, int G, int R, int C, int B, int P, struct hier_chans ch)
{
    for (int r = 0; r < G; r++) {
        int c = r / R, p = r % R;

        for (int cq = 0; cq < C; cq++)
            if (cq != c)
                cs_prog_copy(prog, ref(r, CS_BUF_INPUT, p * B + c * P, P),
                             ref(cq * R + p, CS_BUF_INPUT, p * B + c * P, P), cq * R + p, r,
                             ch.row);
    }
    for (int r = 0; r < G; r++) {
        int c = r / R, p = r % R;

        for (int pq = 0; pq < R; pq++)
            if (pq != p)
                cs_prog_copy(prog, ref(r, CS_BUF_INPUT, p * B, B),
                             ref(c * R + pq, CS_BUF_INPUT, p * B, B), c * R + pq, r, ch.col);
    }
}

/* The layouts of the hierarchical program. Rank (c, p) = c*R + p: column c holds ranks
 * c*R..c*R+R-1, row p the ranks p, R+p, ...
 * SEED: the seed's program, chunk factor G*G (m = G chunks per row part, column part B = C*m);
 * threadblocks as in the seed: tb q of a rank talks to rank q, local reduce of unit j of its part
 * runs on tb j. FIXED: the same, but the row reductions read the row-phase receive slots (the seed
 * re-reads the column-phase ones).
 * COMPACT: the corrected algorithm for sizes where the seed's layout (one reducer threadblock per
 * chunk of a column part, G*G chunks) breaks the runtime's limits: one chunk per row part (chunk
 * factor G), column reductions on the tb of the first column peer, row reductions on the tb of the
 * first row peer, every tb talks to one peer, so a GPU has (R-1 + C-1) tbs per instance. */
enum hier_layout {
    HIER_SEED = 1,
    HIER_FIXED,
    HIER_COMPACT,
};

/* The default layout (docs/generators.md, "Free of credit deadlocks"): the compact program (one
 * chunk per row part) with a send-only and a receive-only tb per peer. On rank r, tb q sends to
 * rank q and tb G+q receives from rank q and does nothing else, so every connection is drained by
 * a tb that waits on nothing its data does not already imply, whatever the step's calls and
 * slots. Column reductions of row part c' run on the send tb of row peer c' (which then sends
 * it); those of the own row part and the row reductions on the send tb of the first column peer.
 * A GPU has 2 x (R-1 + C-1) tbs per instance; a tb's channel is that of its peer (hier_chans).
 * Peer-relative order: the receiver keeps a sender's chunk in scratch slot (sender - receiver -
 * 1) mod R in its column (mod C in its row) and reduces the slots in order, so it reduces its
 * peers' data starting from the next one around, whatever its own index: shifting every rank by
 * a column (R ranks) maps the schedule onto itself (fold.h folds it); the seed's absolute order
 * (GPU 0 waits on 1..R-1, GPU 1 on 0, 2..) did not.
 */
static int hier_split(const struct cs_gen_opts *o, struct cs_sched **out, struct cs_error *err)
{
    int G = o->gpus, C = o->columns, R = G / C, B = C;
    struct hier_chans ch = hier_chans(R, C);
    struct cs_prog *prog = allreduce_prog(o, "hierarchical_allreduce", G, o->nops == 1);

    if (prog == NULL)
        return usage(err, "out of memory");
    for (int r = 0; r < G; r++) { /* column reduce-scatter */
        int c = r / R, p = r % R;

        for (int pq = 0; pq < R; pq++) {
            int q = c * R + pq, slot = (p - pq - 1 + R) % R; /* peer-relative */

            if (pq != p)
                cs_prog_copy(prog, ref(r, CS_BUF_INPUT, pq * B, B),
                             ref(q, CS_BUF_SCRATCH, slot * B, B), q, G + r, ch.col);
        }
    }
    for (int r = 0; r < G; r++) {
        int c = r / R, p = r % R, col_peer = c * R + (p == 0);

        for (int cq = 0; cq < C; cq++)
            for (int k = 0; k < R - 1; k++)
                cs_prog_reduce(prog, ref(r, CS_BUF_INPUT, p * B + cq, 1),
                               ref(r, CS_BUF_SCRATCH, k * B + cq, 1),
                               cq == c ? col_peer : cq * R + p, -1, cq == c ? ch.col : ch.row);
    }
    for (int r = 0; r < G; r++) { /* row reduce-scatter */
        int c = r / R, p = r % R;

        for (int cq = 0; cq < C; cq++) {
            int q = cq * R + p, slot = (c - cq - 1 + C) % C; /* peer-relative */

            if (cq != c)
                cs_prog_copy(prog, ref(r, CS_BUF_INPUT, p * B + cq, 1),
                             ref(q, CS_BUF_SCRATCH, (R - 1) * B + slot, 1), q, G + r, ch.row);
        }
    }
    for (int r = 0; r < G; r++) {
        int c = r / R, p = r % R, col_peer = c * R + (p == 0);
        int red = spread_reductions(R, C) ? c * R + (p <= 1 ? 2 : 1) : col_peer;

        for (int k = 0; k < C - 1; k++)
            cs_prog_reduce(prog, ref(r, CS_BUF_INPUT, p * B + c, 1),
                           ref(r, CS_BUF_SCRATCH, (R - 1) * B + k, 1), red, -1, ch.col);
    }
    for (int r = 0; r < G; r++) { /* all-gather across rows */
        int c = r / R, p = r % R;

        for (int cq = 0; cq < C; cq++)
            if (cq != c)
                cs_prog_copy(prog, ref(r, CS_BUF_INPUT, p * B + c, 1),
                             ref(cq * R + p, CS_BUF_INPUT, p * B + c, 1), cq * R + p, G + r,
                             ch.row);
    }
    for (int r = 0; r < G; r++) { /* all-gather inside columns */
        int c = r / R, p = r % R;

        for (int pq = 0; pq < R; pq++)
            if (pq != p)
                cs_prog_copy(prog, ref(r, CS_BUF_INPUT, p * B, B),
                             ref(c * R + pq, CS_BUF_INPUT, p * B, B), c * R + pq, G + r, ch.col);
    }
    return finish(prog, o, out, err);
}

static int hier_program(const struct cs_gen_opts *o, enum hier_layout lay, struct cs_sched **out,
                        struct cs_error *err)
{
    int G = o->gpus, C = o->columns, R = G / C, P = lay == HIER_COMPACT ? 1 : G, B = C * P;
    int compact = lay == HIER_COMPACT, unit = compact ? B : 1;
    /* the seed's reducer tbs are those of peers: one channel (the compact layout spreads) */
    struct hier_chans ch = compact ? hier_chans(R, C) : (struct hier_chans){0, 0};
    struct cs_prog *prog = allreduce_prog(o, "hierarchical_allreduce", G * P,
                                          o->nops ? o->nops == 1 : lay == HIER_SEED);

    if (prog == NULL)
        return usage(err, "out of memory");
    column_scatter(prog, G, R, B, ch.col);
    for (int r = 0; r < G; r++) {
        int p = r % R, col_peer = r / R * R + (p == 0); /* the first other rank of the column */

        for (int k = 0; k < R - 1; k++)
            for (int j = 0; j < B; j += unit)
                cs_prog_reduce(prog, ref(r, CS_BUF_INPUT, p * B + j, unit),
                               ref(r, CS_BUF_SCRATCH, k * B + j, unit), compact ? col_peer : j, -1,
                               compact ? ch.col : -1);
    }
    row_scatter(prog, G, R, C, B, P, ch.row);
    for (int r = 0; r < G; r++) {
        int c = r / R, p = r % R, row_peer = (c == 0) * R + p; /* the first other rank of the row */

        for (int k = 0; k < C - 1; k++)
            for (int j = 0; j < P; j++) {
                /* the seed's bug: the scratch index restarts at 0 */
                int s = lay == HIER_SEED ? k * P + j : (R - 1) * B + k * P + j;

                cs_prog_reduce(prog, ref(r, CS_BUF_INPUT, p * B + c * P + j, 1),
                               ref(r, CS_BUF_SCRATCH, s, 1), compact ? row_peer : j, -1,
                               compact ? ch.row : -1);
            }
    }
    gather(prog, G, R, C, B, P, ch);
    return finish(prog, o, out, err);
}

int cs_gen_hierarchical(const struct cs_gen_opts *in, struct cs_sched **out, struct cs_error *err)
{
    struct cs_gen_opts o;
    int rc;

    if ((rc = common_opts(in, &o, 4, err)))
        return rc;
    if (o.columns == 0)
        o.columns = 2;
    if (o.columns < 2)
        return usage(err, "--columns must be at least 2 (got %d)", o.columns);
    if (o.gpus % o.columns != 0)
        return usage(err, "--columns %d does not divide --gpus %d", o.columns, o.gpus);
    if (o.nops < 0 || o.nops > 2)
        return usage(err, "dependence nops: 1 (on) or 2 (off)");
    if (o.variant < 0 || o.variant > 1)
        return usage(err, "variant: split (the default) or v1");
    if (o.gpus / o.columns < 2)
        return usage(err, "--gpus %d in %d columns leaves a single row; need at least 2", o.gpus,
                     o.columns);
    if (o.gpus / o.columns > 33 || o.columns > 33)
        return usage(err,
                     "%d rows x %d columns: a GPU has %d column peers and %d row peers, each on "
                     "a channel of their own, and the runtime allows 32 connections per channel "
                     "(at most 33 rows and 33 columns)",
                     o.gpus / o.columns, o.columns, o.gpus / o.columns - 1, o.columns - 1);
    if (o.compat) {
        if (o.gpus * o.gpus * o.instances > 32767)
            return usage(err,
                         "the seed's G*G*instances chunks exceed the runtime's int16_t offsets");
        if (o.columns != 2)
            return usage(err, "--msccl-tools-compat reproduces the seed, which has 2 columns");
        rc = hier_program(&o, HIER_SEED, out, err);
        return rc == CS_ERR_INVALID ? CS_ERR_USAGE : rc;
    }
    if (o.variant == 0) {
        int tbs = 2 * (o.gpus / o.columns + o.columns - 2) * o.instances;

        if (tbs > CS_MAX_DEPID + 1)
            return usage(err,
                         "%d instances of %d rows x %d columns need %d threadblocks per GPU (a "
                         "send and a receive tb per peer); the runtime addresses at most %d",
                         o.instances, o.gpus / o.columns, o.columns, tbs, CS_MAX_DEPID + 1);
        /* finish() would say so too, after lowering a large grid for nothing */
        if (tbs > (o.sms ? o.sms : CS_VERIFY_GPU_SMS) * CS_VERIFY_CTAS_PER_SM)
            return usage(err,
                         "gpu 0 has %d threadblocks; at most %d are co-resident on this GPU (%d "
                         "SMs x %d CTA per SM): the runtime would hang (sms=N or --sms N for a "
                         "GPU of N SMs)",
                         tbs, (o.sms ? o.sms : CS_VERIFY_GPU_SMS) * CS_VERIFY_CTAS_PER_SM,
                         o.sms ? o.sms : CS_VERIFY_GPU_SMS, CS_VERIFY_CTAS_PER_SM);
        rc = hier_split(&o, out, err);
        return rc == CS_ERR_INVALID ? CS_ERR_USAGE : rc;
    }
    /* The seed's layout where it fits the runtime. It has B = G*C reducer tbs per instance (so
     * B*I tbs, all of which must be valid depids), its column sends move B chunks at once, and
     * each column all-gather send waits on all B reducers (B-1 nops around 4 steps); cheaper tests
     * first, then the lowering decides. */
    if (o.gpus * o.columns < CS_MAX_CNT && o.gpus * o.columns * o.instances <= CS_MAX_DEPID + 1 &&
        o.gpus * o.columns + 3 <= CS_MAX_STEPS) {
        struct cs_error e;

        cs_error_init(&e);
        rc = hier_program(&o, HIER_FIXED, out, &e);
        if (rc != CS_ERR_INVALID) {
            if (rc)
                cs_error_set(err, e.file, e.line, "%s", e.msg);
            return rc;
        }
    }
    rc = hier_program(&o, HIER_COMPACT, out, err);
    return rc == CS_ERR_INVALID ? CS_ERR_USAGE : rc;
}

/* ---- collectives of ring and all-pairs */

enum cs_coll cs_gen_coll_parse(const char *name)
{
    static const struct {
        const char *name;
        enum cs_coll coll;
    } colls[] = {
        {"allreduce", CS_COLL_ALLREDUCE},
        {"allgather", CS_COLL_ALLGATHER},
        {"reducescatter", CS_COLL_REDUCE_SCATTER},
        {"alltoall", CS_COLL_ALLTOALL},
    };

    for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++)
        if (strcmp(name, colls[i].name) == 0)
            return colls[i].coll;
    return 0;
}

/* The name of o's collective in algo names: allreduce, allgather, reducescatter, alltoall. */
static const char *coll_word(const struct cs_gen_opts *o)
{
    return o->coll == CS_COLL_REDUCE_SCATTER ? "reducescatter" : cs_coll_name(o->coll);
}

/* A program of o's collective with C chunks in each rank's part (msccl-tools' chunk_factor) and
 * the buffers msccl-tools' collectives declare (shared reference msccl.md 4.1): AllReduce in place
 * over G*C chunks (as allreduce_prog); AllGather in place, input C chunks aliased to the output's
 * G*C at rank*C; ReduceScatter in place over the input's G*C chunks, rank r's output being input
 * chunks r*C..r*C+C-1 (the XML names the input only, as msccl-tools' aliasing writes it);
 * AllToAll out of place, G*C chunks in and out. Instances are interleaved (chunk k becomes
 * k*instances+i), which keeps every replica inside its rank's part. NULL when out of memory. */
static struct cs_prog *coll_prog(const struct cs_gen_opts *o, const char *name, int C)
{
    int G = o->gpus, ag = o->coll == CS_COLL_ALLGATHER, a2a = o->coll == CS_COLL_ALLTOALL;
    struct cs_prog_opts po = {.name = name,
                              .coll = o->coll,
                              .ngpus = G,
                              .in_chunks = ag ? C : G * C,
                              .out_chunks = ag || a2a ? G * C : 0,
                              .inplace = !a2a,
                              .proto = o->proto,
                              .instances = o->instances,
                              .interleaved = 1,
                              .fusion = 1};

    if (o->coll == CS_COLL_ALLREDUCE)
        return allreduce_prog(o, name, G * C, 0);
    return cs_prog_new(&po);
}

/* ---- ring */

/* The GPU at position p of ring k: the order of rings when given, else p, or with per_node N,
 * p's node with its GPUs rotated by k. */
static int ring_gpu(const struct cs_gen_opts *o, int k, int p)
{
    int n = o->per_node;

    if (o->rings != NULL)
        return o->rings[(size_t)(k % o->nrings) * (size_t)o->gpus + (size_t)p];
    return n ? p / n * n + (p % n + k) % n : p;
}

/* Each of o's rings visits every GPU once. */
static int check_rings(const struct cs_gen_opts *o, struct cs_error *err)
{
    unsigned char *seen = o->rings ? calloc((size_t)o->gpus, 1) : NULL;

    if (o->rings == NULL)
        return 0;
    if (seen == NULL || o->nrings < 1) {
        free(seen);
        return usage(err, seen == NULL ? "out of memory" : "no ring order");
    }
    for (int k = 0; k < o->nrings; k++) {
        memset(seen, 0, (size_t)o->gpus);
        for (int p = 0; p < o->gpus; p++) {
            int g = o->rings[(size_t)k * (size_t)o->gpus + (size_t)p];

            if (g < 0 || g >= o->gpus || seen[g]) {
                free(seen);
                return usage(err, "ring %d does not visit each of the %d GPUs once", k, o->gpus);
            }
            seen[g] = 1;
        }
    }
    free(seen);
    return 0;
}

/* AllReduce: ring k moves chunks k*G .. k*G+G-1. Block b starts at rank b+1 and is reduced hop by
 * hop around the ring (s, then rrs at each rank, the last fusion being rrcs at rank b, which owns
 * the sum); then it travels around once more (rcs, and r at the last rank). One tb per ring and
 * rank sends to the next rank and receives from the previous one, on the ring's own channel. A tb
 * holds 2G-1 steps; above 32 GPUs that breaks the executor's 64, so each ring then runs its
 * reduce-scatter and its all-gather on two channels (G steps each): within the limit to 64 GPUs,
 * a what-if above (the executor refuses it; cs_sched_steps_warning). */
static void ring_allreduce(struct cs_prog *prog, const struct cs_gen_opts *o, int split)
{
    int G = o->gpus, K = o->channels;

    for (int k = 0; k < K; k++) {
        int ag = split ? K + k : k;

        for (int b = 0; b < G; b++) {
            int idx = k * G + b, prev = ring_gpu(o, k, (b + 1) % G);

            for (int s = 1; s < G; s++) {
                int r = ring_gpu(o, k, (b + 1 + s) % G);

                cs_prog_reduce(prog, ref(r, CS_BUF_INPUT, idx, 1), ref(prev, CS_BUF_INPUT, idx, 1),
                               k, k, k);
                prev = r;
            }
            for (int s = 1; s < G; s++) {
                int r = ring_gpu(o, k, (b + s) % G);

                cs_prog_copy(prog, ref(prev, CS_BUF_INPUT, idx, 1), ref(r, CS_BUF_INPUT, idx, 1),
                             ag, ag, ag);
                prev = r;
            }
        }
    }
}

/* AllGather and ReduceScatter: each rank's part has K chunks, ring k moving chunk k of every part.
 * AllGather: the part of the rank at position b of ring k leaves it (s) and is copied forward G-1
 * hops (rcs at each rank, r at the last, the rank before b). ReduceScatter: the part of the rank
 * at position b starts at position b+1 and is reduced forward hop by hop (s, rrcs at each rank:
 * msccl-tools fuses to rrs only where a receive overwrites the slot next; rrc at b, which owns the
 * sum), the AllReduce's first half. One tb per ring and rank, G steps. */
static void ring_gather_scatter(struct cs_prog *prog, const struct cs_gen_opts *o)
{
    int G = o->gpus, K = o->channels;

    for (int k = 0; k < K; k++)
        for (int b = 0; b < G; b++) {
            int owner = ring_gpu(o, k, b), idx = owner * K + k, prev = ring_gpu(o, k, (b + 1) % G);
            struct cs_ref src = ref(owner, CS_BUF_INPUT, k, 1); /* in place: output chunk idx */

            for (int s = 1; s < G && o->coll == CS_COLL_ALLGATHER; s++) {
                struct cs_ref dst = ref(ring_gpu(o, k, (b + s) % G), CS_BUF_OUTPUT, idx, 1);

                cs_prog_copy(prog, src, dst, k, k, k);
                src = dst;
            }
            for (int s = 1; s < G && o->coll == CS_COLL_REDUCE_SCATTER; s++) {
                int r = ring_gpu(o, k, (b + 1 + s) % G);

                cs_prog_reduce(prog, ref(r, CS_BUF_INPUT, idx, 1), ref(prev, CS_BUF_INPUT, idx, 1),
                               k, k, k);
                prev = r;
            }
        }
}

/* A tb of ring_emit, for sorting: its peers and its channel (also its index before the sort). */
struct ring_tb {
    int send, recv, chan;
};

static int ring_tb_cmp(const void *a, const void *b)
{
    const struct ring_tb *x = a, *y = b;
    int xs[] = {x->send, x->recv, x->chan}, ys[] = {y->send, y->recv, y->chan};

    return cs_cmp_ints(xs, ys, 3);
}

/* The ring programs above, written out as their lowering lays them out, without the lowering
 * (which holds about 230 bytes a step: a 512-GPU ring spends most of its generation there).
 * What the lowering makes of them, for GPU g at position q of ring k (h counts its steps):
 * - AllReduce: hop h of the reduce-scatter handles block q-1-h (chunk k*G + block), so h = 0 is
 *   s, then rrs, and h = G-1 the rrcs of block q, which g owns; the all-gather continues with
 *   rcs of blocks q-1, q-2, ... and ends with r of block q+1 (2G-1 steps). Split (2G-1 over the
 *   executor's steps), the reduce-scatter ends with rrc on channel k and the all-gather runs on
 *   channel K+k: s of block q after the rrc, then rcs of block q-h and r of block q+1, step h
 *   waiting on the reduce-scatter's step that last touched its block (h-1, or G-1 for h = 0),
 *   every reduce-scatter step publishing its flag.
 * - AllGather: s of g's own part, rcs of the parts of positions q-1, q-2, ..., r of q+1's.
 * - ReduceScatter: s of position q-1's part, rrcs of q-2's, ..., rrc of g's own.
 * Instances replicate each GPU's tbs on channels i*T + t (T the tbs of one instance, t = k, or
 * K + k for the split all-gather), numbered in the lowering's order: by send peer, receive peer,
 * then channel. AllReduce's chunks are blocked by instance (i*G*K + chunk), the others'
 * interleaved (chunk*I + i). tests/check_gen holds this equal to the lowering of the programs
 * above, XML byte for byte. */
struct ring_ctx {
    const struct cs_gen_opts *o;
    int G, K, I, T, n, ar, ag, split, nsteps;
    int *pos;           /* pos[k * G + g]: g's position in ring k */
    int *id_of;         /* n entries: the tb id of channel c, on the GPU being written */
    struct ring_tb *rt; /* n entries */
};

/* Write GPU g of the ring schedule into gpu (empty, its id set by the caller): its tbs and steps
 * as ring_emit describes them. 0, or -1 out of memory (gpu keeps what it got: freed with it). */
static int ring_emit_gpu(const struct ring_ctx *x, int g, struct cs_gpu *gpu)
{
    const struct cs_gen_opts *o = x->o;
    int G = x->G, K = x->K, I = x->I, T = x->T, n = x->n, ar = x->ar, ag = x->ag;
    int split = x->split, nsteps = x->nsteps, *pos = x->pos, *id_of = x->id_of;
    struct ring_tb *rt = x->rt;

    gpu->id = g;
    gpu->i_chunks = ag ? 0 : G * K * I;
    gpu->o_chunks = ag ? G * K * I : 0;
    gpu->tbs = calloc((size_t)n, sizeof(*gpu->tbs));
    if (gpu->tbs == NULL)
        return -1;
    gpu->cap_tbs = n;
    /* tb c of instance c / T runs ring (c % T) % K; the tbs in the lowering's order (by send
     * peer, receive peer, channel), numbered in it */
    for (int c = 0; c < n; c++) {
        int k = c % T % K, q = pos[(size_t)k * G + g];

        rt[c] = (struct ring_tb){ring_gpu(o, k, (q + 1) % G), ring_gpu(o, k, (q + G - 1) % G), c};
    }
    qsort(rt, (size_t)n, sizeof(*rt), ring_tb_cmp);
    for (int j = 0; j < n; j++)
        id_of[rt[j].chan] = j;
    for (int j = 0; j < n; j++) {
        int c = rt[j].chan, i = c / T, t = c % T, k = t % K, gather = split && t >= K;
        int q = pos[(size_t)k * G + g];
        struct cs_tb *tb = &gpu->tbs[gpu->ntbs++];

        tb->id = j;
        tb->chan = c;
        tb->send = rt[j].send;
        tb->recv = rt[j].recv;
        tb->steps = calloc((size_t)nsteps, sizeof(*tb->steps));
        if (tb->steps == NULL)
            return -1;
        tb->nsteps = tb->cap_steps = nsteps;
        for (int h = 0; h < nsteps; h++) {
            struct cs_step *st = &tb->steps[h];
            enum cs_step_type type;
            int at, chunk; /* the block's position (AllReduce) or the part's owner's */

            st->s = h;
            st->cnt = 1;
            st->depid = st->deps = -1;
            if (ar && gather) { /* split AllReduce, the all-gather */
                type = h == 0 ? CS_STEP_S : h == G - 1 ? CS_STEP_R : CS_STEP_RCS;
                at = h == 0 ? q : q - h;
                st->depid = id_of[i * T + k];
                st->deps = h == 0 ? G - 1 : h - 1;
            } else if (ar && h < G) { /* the reduce-scatter */
                type = h == 0       ? CS_STEP_S
                       : h == G - 1 ? (split ? CS_STEP_RRC : CS_STEP_RRCS)
                                    : CS_STEP_RRS;
                at = q - 1 - h;
                st->hasdep = split;
            } else if (ar) { /* the all-gather, on the same tb */
                type = h == 2 * G - 2 ? CS_STEP_R : CS_STEP_RCS;
                at = q - 1 - (h - G);
            } else if (ag) {
                type = h == 0 ? CS_STEP_S : h == G - 1 ? CS_STEP_R : CS_STEP_RCS;
                at = q - h;
            } else {
                type = h == 0 ? CS_STEP_S : h == G - 1 ? CS_STEP_RRC : CS_STEP_RRCS;
                at = q - 1 - h;
            }
            at = (at % G + G) % G;
            chunk = ar ? i * G * K + k * G + at : (ring_gpu(o, k, at) * K + k) * I + i;
            st->type = type;
            st->srcbuf = st->dstbuf = ag ? CS_BUF_OUTPUT : CS_BUF_INPUT;
            st->srcoff = st->dstoff = chunk;
        }
    }
    return 0;
}

static void gpu_release(struct cs_gpu *gpu)
{
    for (int t = 0; t < gpu->ntbs; t++)
        free(gpu->tbs[t].steps);
    free(gpu->tbs);
    gpu->tbs = NULL;
    gpu->ntbs = gpu->cap_tbs = 0;
}

/* Whether GPU b is GPU a's image under the rank shift by `by` (mod G) in everything the plan and
 * the replay read: each tb of a has one on b with the same channel, its peers shifted by `by`,
 * and the same steps (type, cnt, hasdep, and the dependency: the same step of the image of the
 * same tb); chunk offsets may differ. Else 0 with why. */
static int gpu_is_image(const struct cs_gpu *a, const struct cs_gpu *b, int by, int G, int *m,
                        char *why, size_t len)
{
    if (a->ntbs != b->ntbs) {
        snprintf(why, len, "GPU %d has %d tbs, GPU %d %d", b->id, b->ntbs, a->id, a->ntbs);
        return 0;
    }
    for (int t = 0; t < a->ntbs; t++) {
        m[t] = -1;
        for (int u = 0; u < b->ntbs && m[t] < 0; u++)
            if (b->tbs[u].chan == a->tbs[t].chan)
                m[t] = u;
        if (m[t] < 0) {
            snprintf(why, len, "GPU %d has no tb on channel %d", b->id, a->tbs[t].chan);
            return 0;
        }
    }
    for (int t = 0; t < a->ntbs; t++) {
        const struct cs_tb *x = &a->tbs[t], *y = &b->tbs[m[t]];
        int send = x->send < 0 ? -1 : (x->send + by) % G,
            recv = x->recv < 0 ? -1 : (x->recv + by) % G;

        if (y->send != send || y->recv != recv || y->nsteps != x->nsteps) {
            snprintf(why, len, "GPU %d tb %d is not GPU %d tb %d shifted by %d", b->id, y->id,
                     a->id, x->id, by);
            return 0;
        }
        for (int h = 0; h < x->nsteps; h++) {
            const struct cs_step *p = &x->steps[h], *q = &y->steps[h];

            if (p->type != q->type || p->cnt != q->cnt || p->hasdep != q->hasdep ||
                p->deps != q->deps || p->srcbuf != q->srcbuf || p->dstbuf != q->dstbuf ||
                (p->depid < 0 ? q->depid != -1 : q->depid != b->tbs[m[p->depid]].id)) {
                snprintf(why, len, "GPU %d tb %d step %d differs from GPU %d tb %d's", b->id, y->id,
                         h, a->id, x->id);
                return 0;
            }
        }
    }
    return 1;
}

/* The steps of tb that send (dir 1) or receive (dir 0), in order, equal in count and cnt to those
 * of the other end. */
static int ends_match(const struct cs_tb *snd, const struct cs_tb *rcv)
{
    int i = 0, j = 0;

    for (;;) {
        while (i < snd->nsteps && !cs_step_sends(snd->steps[i].type))
            i++;
        while (j < rcv->nsteps && !cs_step_recvs(rcv->steps[j].type))
            j++;
        if (i == snd->nsteps || j == rcv->nsteps)
            return i == snd->nsteps && j == rcv->nsteps;
        if (snd->steps[i++].cnt != rcv->steps[j++].cnt)
            return 0;
    }
}

/* Under the shift by s, every connection of the whole schedule is the image of one sent from GPUs
 * 0..s-1: that GPU's tb sending to p on channel c has its receiver on p, the image of GPU p mod s
 * shifted by p - p mod s, there the tb on c receiving from the sender's preimage; the two ends
 * move as many chunks, in the same counts. 1, or 0 with why. */
static int rep_connections(const struct cs_sched *sched, int s, char *why, size_t len)
{
    int G = sched->ngpus;

    for (int g = 0; g < s; g++)
        for (int t = 0; t < sched->gpus[g].ntbs; t++) {
            const struct cs_tb *tb = &sched->gpus[g].tbs[t], *rcv = NULL;
            int p, base, from;

            if (tb->send < 0)
                continue;
            p = tb->send % s;
            base = tb->send - p;
            from = ((g - base) % G + G) % G;
            for (int u = 0; u < sched->gpus[p].ntbs && rcv == NULL; u++)
                if (sched->gpus[p].tbs[u].chan == tb->chan && sched->gpus[p].tbs[u].recv == from)
                    rcv = &sched->gpus[p].tbs[u];
            if (rcv == NULL || !ends_match(tb, rcv)) {
                snprintf(why, len,
                         "GPU %d tb %d's sends on channel %d have no matching receives "
                         "on GPU %d",
                         g, tb->id, tb->chan, tb->send);
                return 0;
            }
        }
    return 1;
}

/* The representatives' proof: the smallest divisor s of G (s <= R) such that every GPU g >= R,
 * written in turn into one scratch GPU and dropped, is the image of GPU g mod s under the shift by
 * g - g mod s (and so are GPUs s..R-1, already written): the whole schedule is then invariant
 * under the shift by s. 0 when there is none (why says what breaks the largest), -1 out of
 * memory. */
static int ring_rep_shift(const struct ring_ctx *x, struct cs_sched *sched, int R, char *why,
                          size_t len)
{
    struct cs_gpu scratch = {0};
    int G = x->G, *m = malloc((size_t)x->n * sizeof(int)), found = 0;

    if (m == NULL)
        return -1;
    for (int s = 1; s <= R && !found; s++) {
        int ok = R % s == 0;

        for (int g = s; ok && g < G; g++) {
            const struct cs_gpu *img = &sched->gpus[g];

            if (g >= R) {
                gpu_release(&scratch);
                if (ring_emit_gpu(x, g, &scratch) != 0) {
                    gpu_release(&scratch);
                    free(m);
                    return -1;
                }
                img = &scratch;
            }
            ok = gpu_is_image(&sched->gpus[g % s], img, g - g % s, G, m, why, len);
        }
        found = ok ? s : 0;
    }
    gpu_release(&scratch);
    free(m);
    return found > 0 && !rep_connections(sched, found, why, len) ? 0 : found;
}

/* The ring programs above, written out as their lowering lays them out, without the lowering
 * (which holds about 230 bytes a step: a 512-GPU ring spends most of its generation there).
 * What the lowering makes of them, for GPU g at position q of ring k (h counts its steps):
 * - AllReduce: hop h of the reduce-scatter handles block q-1-h (chunk k*G + block), so h = 0 is
 *   s, then rrs, and h = G-1 the rrcs of block q, which g owns; the all-gather continues with
 *   rcs of blocks q-1, q-2, ... and ends with r of block q+1 (2G-1 steps). Split (2G-1 over the
 *   executor's steps), the reduce-scatter ends with rrc on channel k and the all-gather runs on
 *   channel K+k: s of block q after the rrc, then rcs of block q-h and r of block q+1, step h
 *   waiting on the reduce-scatter's step that last touched its block (h-1, or G-1 for h = 0),
 *   every reduce-scatter step publishing its flag.
 * - AllGather: s of g's own part, rcs of the parts of positions q-1, q-2, ..., r of q+1's.
 * - ReduceScatter: s of position q-1's part, rrcs of q-2's, ..., rrc of g's own.
 * Instances replicate each GPU's tbs on channels i*T + t (T the tbs of one instance, t = k, or
 * K + k for the split all-gather), numbered in the lowering's order: by send peer, receive peer,
 * then channel. AllReduce's chunks are blocked by instance (i*G*K + chunk), the others'
 * interleaved (chunk*I + i). tests/check_gen holds this equal to the lowering of the programs
 * above, XML byte for byte.
 * With reps = R > 0 (a divisor of G), only GPUs 0..R-1 get their tbs; the others stay empty and
 * the schedule records the rank shift they are images under (ring_rep_shift). */
static int ring_emit(const struct cs_gen_opts *o, const char *name, int split, int reps,
                     struct cs_sched **out, struct cs_error *err)
{
    int G = o->gpus, K = o->channels, I = o->instances, T = split ? 2 * K : K, n = T * I;
    struct ring_ctx x = {.o = o, .G = G, .K = K, .I = I, .T = T, .n = n, .split = split};
    struct cs_sched *sched = cs_sched_new();
    char why[200] = "";

    x.ar = o->coll == CS_COLL_ALLREDUCE;
    x.ag = o->coll == CS_COLL_ALLGATHER;
    x.nsteps = x.ar && !split ? 2 * G - 1 : G;
    x.pos = malloc((size_t)K * (size_t)G * sizeof(*x.pos));
    x.id_of = malloc((size_t)n * sizeof(int));
    x.rt = malloc((size_t)n * sizeof(*x.rt));
    if (x.pos == NULL || x.id_of == NULL || x.rt == NULL || sched == NULL ||
        cs_sched_set_name(sched, name))
        goto nomem;
    for (int k = 0; k < K; k++)
        for (int p = 0; p < G; p++)
            x.pos[(size_t)k * G + ring_gpu(o, k, p)] = p;
    sched->proto = o->proto;
    sched->ngpus = G;
    sched->coll = o->coll;
    sched->inplace = 1;
    sched->nchannels = n;
    sched->nchunksperloop = G * K * I;
    for (int g = 0; g < G; g++) {
        struct cs_gpu *gpu = cs_sched_add_gpu(sched);

        if (gpu == NULL)
            goto nomem;
        gpu->id = g;
        if ((reps == 0 || g < reps) && ring_emit_gpu(&x, g, gpu) != 0)
            goto nomem;
    }
    if (reps > 0) {
        int s = ring_rep_shift(&x, sched, reps, why, sizeof(why));

        if (s < 0)
            goto nomem;
        if (s == 0) {
            cs_free_each(3, x.pos, x.id_of, x.rt);
            cs_sched_free(sched);
            return usage(err,
                         "the %d-GPU ring is too large to write whole, and no rank shift of at "
                         "most %d GPUs maps it onto itself, so it cannot be written by its "
                         "representatives either (%s)",
                         G, reps, why);
        }
        sched->rep_gpus = reps;
        sched->rep_shift = s;
    }
    cs_free_each(3, x.pos, x.id_of, x.rt);
    return finish_sched(sched, o, out, err);
nomem:
    cs_free_each(3, x.pos, x.id_of, x.rt);
    cs_sched_free(sched);
    return usage(err, "out of memory");
}

/* How many GPUs a ring of G written by its representatives holds: the largest divisor of G below
 * it whose GPUs hold at most CS_GEN_REP_STEPS steps of per_gpu each (at least 1). */
static int rep_count(int G, long long per_gpu)
{
    int best = 1;

    for (int r = 1; r < G; r++)
        if (G % r == 0 && (long long)r * per_gpu <= CS_GEN_REP_STEPS)
            best = r;
    return best;
}

/* cs_gen_ring, written out directly or (lowered) through the lowering of its program. */
static int gen_ring(const struct cs_gen_opts *in, int lowered, struct cs_sched **out,
                    struct cs_error *err)
{
    struct cs_gen_opts o;
    struct cs_prog *prog;
    char name[64];
    int rc, G, K, split, nch, reps = 0;

    if ((rc = common_opts(in, &o, 2, err)))
        return rc;
    if (o.coll == CS_COLL_ALLTOALL)
        return usage(err, "ring has no AllToAll (allpairs writes one)");
    if (o.channels == 0)
        o.channels = 1;
    G = o.gpus;
    K = o.channels;
    split = o.coll == CS_COLL_ALLREDUCE && 2 * G - 1 > CS_MAX_STEPS;
    nch = K * (split ? 2 : 1) * o.instances;
    if (K < 1)
        return usage(err, "--channels must be at least 1");
    if (nch > CS_MAX_CHANNELS)
        return usage(err, "%d rings x %d instances%s need %d channels, more than the runtime's %d",
                     K, o.instances, split ? " x 2 (phases split above 32 GPUs)" : "", nch,
                     CS_MAX_CHANNELS);
    if (o.per_node && (o.per_node > G || G % o.per_node != 0))
        return usage(err, "--per-node %d does not divide --gpus %d", o.per_node, G);
    if ((rc = check_rings(&o, err)) != 0)
        return rc;
    {
        /* each GPU runs 2(G-1) steps per ring for AllReduce (G-1 for the others); the schedule
         * and its plan hold about 120 bytes a step */
        long long steps = (long long)G * K * o.instances *
                          (o.coll == CS_COLL_ALLREDUCE ? 2LL * (G - 1) : (long long)(G - 1));

        if (!lowered && (o.reps == CS_GEN_REPS_ALWAYS ||
                         (o.reps == CS_GEN_REPS_AUTO && steps > CS_GEN_MAX_STEPS)))
            reps = rep_count(G, steps / G);
        if (steps > CS_GEN_MAX_STEPS && reps == 0)
            return usage(err,
                         "%d GPUs x %d rings x %d instances: %lld steps (about %.1f GB to plan, "
                         "%.1f GB of XML), more than the %d a generated schedule may have",
                         G, K, o.instances, steps, steps * 120e-9, steps * 125e-9,
                         CS_GEN_MAX_STEPS);
    }
    if ((rc = chunks_fit(&o, (long long)G * K, "ring", err)) != 0)
        return rc;
    snprintf(name, sizeof(name), "%s_ring_%dch", coll_word(&o), K);
    if (!lowered) {
        rc = ring_emit(&o, name, split, reps, out, err);
        return rc == CS_ERR_INVALID ? CS_ERR_USAGE : rc;
    }
    prog = coll_prog(&o, name, K);
    if (prog == NULL)
        return usage(err, "out of memory");
    if (o.coll == CS_COLL_ALLREDUCE)
        ring_allreduce(prog, &o, split);
    else
        ring_gather_scatter(prog, &o);
    rc = finish(prog, &o, out, err);
    return rc == CS_ERR_INVALID ? CS_ERR_USAGE : rc;
}

int cs_gen_ring(const struct cs_gen_opts *in, struct cs_sched **out, struct cs_error *err)
{
    return gen_ring(in, 0, out, err);
}

int cs_gen_ring_lowered(const struct cs_gen_opts *in, struct cs_sched **out, struct cs_error *err)
{
    return gen_ring(in, 1, out, err);
}

/* ---- all-pairs */

/* Rank r owns chunk r (part r). Reduce-scatter (AllReduce, ReduceScatter): every rank sends chunk
 * q to rank q's scratch (tb q talks to rank q); a local tb reduces the G-1 received chunks into
 * chunk r. All-gather (AllReduce, AllGather): chunk r goes to every other rank. AllToAll: chunk q
 * of rank r goes to chunk r of rank q's output, and chunk r to its own output by a local copy on
 * the tb of the next rank. The runtime allows 32 sending tbs per channel, so above 33 GPUs the
 * pair (r, q) uses channel (r + q) mod ceil((G-1)/32). */
int cs_gen_allpairs(const struct cs_gen_opts *in, struct cs_sched **out, struct cs_error *err)
{
    struct cs_gen_opts o;
    struct cs_prog *prog;
    char name[64];
    enum cs_coll coll;
    int rc, G, nch, scatter, gather;

    if ((rc = common_opts(in, &o, 2, err)))
        return rc;
    G = o.gpus;
    nch = (G - 1 + 31) / 32;
    coll = o.coll;
    scatter = coll == CS_COLL_ALLREDUCE || coll == CS_COLL_REDUCE_SCATTER;
    gather = coll == CS_COLL_ALLREDUCE || coll == CS_COLL_ALLGATHER;
    /* before any lowering (which grows as G^2 x instances): a reduce waits on the threadblock of
     * each peer, tb q for peer q (G x instances tbs once replicated), and the runtime's
     * dependency ids are int8 */
    if (scatter && G - 1 > CS_MAX_DEPID)
        return usage(err,
                     "%d GPUs: each reduce waits on the threadblock of every peer "
                     "(tb q for GPU q), and the runtime's dependency ids stop at %d: at most %d "
                     "GPUs for %s",
                     G, CS_MAX_DEPID, CS_MAX_DEPID + 1, coll_word(&o));
    if (scatter && (long long)G * o.instances - 1 > CS_MAX_DEPID)
        return usage(err,
                     "%d GPUs x %d instances: each reduce waits on the threadblock of every peer "
                     "in its instance (%d tbs in all), and the runtime's dependency ids stop at "
                     "%d: at most %d GPUs x instances for %s",
                     G, o.instances, G * o.instances, CS_MAX_DEPID, CS_MAX_DEPID + 1,
                     coll_word(&o));
    if ((rc = chunks_fit(&o, G, "allpairs", err)) != 0)
        return rc;
    snprintf(name, sizeof(name), "%s_allpairs", coll_word(&o));
    prog = coll_prog(&o, name, 1);
    if (prog == NULL)
        return usage(err, "out of memory");
    for (int r = 0; r < G && scatter; r++)
        for (int q = 0; q < G; q++)
            if (q != r)
                cs_prog_copy(prog, ref(r, CS_BUF_INPUT, q, 1),
                             ref(q, CS_BUF_SCRATCH, r < q ? r : r - 1, 1), q, r, (r + q) % nch);
    for (int r = 0; r < G && scatter; r++)
        for (int k = 0; k < G - 1; k++)
            cs_prog_reduce(prog, ref(r, CS_BUF_INPUT, r, 1), ref(r, CS_BUF_SCRATCH, k, 1), G, -1,
                           -1);
    for (int r = 0; r < G && gather; r++)
        for (int q = 0; q < G; q++)
            if (q != r)
                cs_prog_copy(prog, ref(r, CS_BUF_INPUT, coll == CS_COLL_ALLGATHER ? 0 : r, 1),
                             ref(q, coll == CS_COLL_ALLGATHER ? CS_BUF_OUTPUT : CS_BUF_INPUT, r, 1),
                             q, r, (r + q) % nch);
    for (int r = 0; r < G && coll == CS_COLL_ALLTOALL; r++)
        for (int q = 0; q < G; q++) {
            int tb = q == r ? (r + 1) % G : q;

            cs_prog_copy(prog, ref(r, CS_BUF_INPUT, q, 1), ref(q, CS_BUF_OUTPUT, r, 1), tb, r,
                         (r + tb) % nch);
        }
    rc = finish(prog, &o, out, err);
    return rc == CS_ERR_INVALID ? CS_ERR_USAGE : rc;
}

/* ---- NCCL */

/* NCCL's tree of channel k over G GPUs on M nodes of N: in each node a chain starting at its GPU
 * (k/2) mod N (channels 2j and 2j+1 share a chain, as NCCL's tree channels come in pairs over
 * one intra-node order), whose head joins tree k mod 2 of NCCL's double binary tree between the
 * nodes (cs_nccl_dtree): its parent is the parent node's head, its children the next GPU of the
 * chain and the child nodes' heads (NCCL_TOPO_PATTERN_TREE: all of a node's network traffic at
 * one GPU). order[] lists the GPUs parents first (breadth first from the root). */
struct nccl_tree {
    int *parent;     /* -1 at the root */
    int (*child)[3]; /* chain, then child nodes */
    int *nchild;
    int *order;
};

static void tree_build(struct nccl_tree *t, int G, int M, int k)
{
    int N = G / M, n = 0;

    for (int node = 0; node < M; node++) {
        int up, down[2];

        cs_nccl_dtree(M, node, k % 2, &up, down);
        for (int i = 0; i < N; i++) {
            int r = node * N + (k / 2 + i) % N;

            t->nchild[r] = 0;
            t->parent[r] = i > 0 ? node * N + (k / 2 + i - 1) % N : -1;
            if (i + 1 < N)
                t->child[r][t->nchild[r]++] = node * N + (k / 2 + i + 1) % N;
            if (i > 0)
                continue;
            if (up >= 0)
                t->parent[r] = up * N + k / 2 % N;
            for (int d = 0; d < 2; d++)
                if (down[d] >= 0)
                    t->child[r][t->nchild[r]++] = down[d] * N + k / 2 % N;
        }
    }
    for (int r = 0; r < G; r++)
        if (t->parent[r] < 0)
            t->order[n++] = r;
    for (int i = 0; i < n && n < G; i++)
        for (int c = 0; c < t->nchild[t->order[i]]; c++)
            t->order[n++] = t->child[t->order[i]][c];
}

/* AllReduce on K tree channels, channel k over chunks k*G .. k*G+G-1 of the buffer (one step
 * moves them all; the executor's loop pipelines): up the tree, each GPU receives and reduces its
 * children's sums, then sends its own to its parent; the root holds the sum and it comes down
 * again, each GPU receiving from its parent and sending to its children. The threadblocks are
 * laid out so that a GPU forwards as NCCL's tree kernel does, in one fused step per direction
 * (recvReduceSend up, recvCopySend down): its up tb receives from its last child and sends to
 * its parent (rrs; the root's sends to its first child, rrcs where it has one child), its down
 * tb receives from its parent and sends to its first child (rcs); a tb per other child receives
 * from that child (rrc, before the last child's) and sends to the next child. A chain inside a
 * node thus streams hop by hop (LL, LL128: line by line; Simple: slice by slice) instead of
 * waiting at each GPU for its whole share. Slots of tb[r]: 0 up, 1 down, 2.. the other
 * children; a leaf's up tb also receives from its parent. */
static int nccl_tree(const struct cs_gen_opts *o, struct cs_sched **out, struct cs_error *err)
{
    int G = o->gpus, K = o->channels, rc;
    struct nccl_tree t = {malloc(G * sizeof(int)), malloc(G * sizeof(*t.child)),
                          malloc(G * sizeof(int)), malloc(G * sizeof(int))};
    int *next_tb = calloc(G, sizeof(int)), (*tb)[4] = malloc(G * sizeof(*tb));
    struct cs_gen_opts one = *o;
    struct cs_prog *prog = NULL;

    one.instances = 1;
    if (G >= CS_MAX_CNT) {
        rc = usage(err,
                   "tree over %d GPUs: each step moves a GPU's %d chunks of the channel, and the "
                   "runtime allows cnt < %d",
                   G, G, CS_MAX_CNT);
        goto done;
    }
    if ((rc = chunks_fit(&one, (long long)G * K, "tree", err)) != 0)
        goto done;
    prog = allreduce_prog(&one, "allreduce_tree", G * K, 0);

    if (!t.parent || !t.child || !t.nchild || !t.order || !next_tb || !tb || !prog) {
        rc = usage(err, "out of memory");
        goto done;
    }
    for (int k = 0; k < K; k++) {
        tree_build(&t, G, o->nodes, k);
        for (int r = 0; r < G; r++) {
            int m = t.nchild[r];

            tb[r][0] = next_tb[r]++;
            tb[r][1] = t.parent[r] >= 0 && m > 0 ? next_tb[r]++ : -1;
            for (int s = 2; s < 4; s++)
                tb[r][s] = s - 1 < m ? next_tb[r]++ : -1;
        }
        for (int i = G - 1; i >= 0; i--) { /* children before parents */
            int v = t.order[i], m = t.nchild[v];

            for (int c = 0; c < m; c++)
                cs_prog_reduce(prog, ref(v, CS_BUF_INPUT, k * G, G),
                               ref(t.child[v][c], CS_BUF_INPUT, k * G, G), tb[t.child[v][c]][0],
                               c == m - 1 ? tb[v][0] : tb[v][2 + c], k);
        }
        for (int i = 0; i < G; i++) { /* parents before children */
            int v = t.order[i];

            for (int c = 0; c < t.nchild[v]; c++) {
                int w = t.child[v][c];
                int from = c > 0 ? tb[v][1 + c] : t.parent[v] >= 0 ? tb[v][1] : tb[v][0];

                cs_prog_copy(prog, ref(v, CS_BUF_INPUT, k * G, G), ref(w, CS_BUF_INPUT, k * G, G),
                             from, tb[w][1] >= 0 ? tb[w][1] : tb[w][0], k);
            }
        }
    }
    rc = finish(prog, o, out, err);
    prog = NULL;
    rc = rc == CS_ERR_INVALID ? CS_ERR_USAGE : rc;
done:
    cs_prog_free(prog);
    cs_free_each(6, t.parent, t.child, t.nchild, t.order, next_tb, tb);
    return rc;
}

/* The name of NCCL's schedule: collective, version, algorithm, channels and threads. */
static int nccl_name(struct cs_sched *s, const struct cs_gen_opts *o, const struct cs_nccl_width *w,
                     struct cs_error *err)
{
    char ver[16], name[128], *copy;

    cs_nccl_version_name(o->nccl_version, ver, sizeof(ver));
    if (o->coll == CS_COLL_ALLTOALL)
        snprintf(name, sizeof(name), "%s_nccl_%s_p2p", coll_word(o), ver);
    else
        snprintf(name, sizeof(name), "%s_nccl_%s_%s_%dch_%dthr", coll_word(o), ver,
                 cs_nccl_algo_name(o->nccl_algo), w->channels, w->threads);
    if ((copy = strdup(name)) == NULL)
        return usage(err, "out of memory");
    free(s->name);
    s->name = copy;
    return 0;
}

/* What the log at path says of the communicator into o where o does not say it (gpus, nodes,
 * channels, version), and its printed rings into o->rings (new: the caller frees it). */
static int nccl_log_opts(const char *path, struct cs_gen_opts *o, struct cs_error *err)
{
    struct cs_ncclinfo *log;
    struct cs_error e;
    int rc = 0, K, n = 0, *rings;

    cs_error_init(&e);
    if (cs_ncclinfo_read(path, &log, &e) != 0) {
        char where[600];

        return usage(err, "nccl log: %s", cs_error_format(&e, where, sizeof(where)));
    }
    if (log->nranks < 2)
        rc = usage(err, "nccl log %s: no communicator of 2 ranks or more", path);
    else if (o->gpus && o->gpus != log->nranks)
        rc = usage(err, "nccl log %s: %d ranks (line %d), not %d GPUs", path, log->nranks,
                   log->comm_line, o->gpus);
    else if (o->nccl_version == 0 &&
             (log->version < CS_NCCL_RULE_MIN || log->version >= CS_NCCL_VERSION_END))
        rc = usage(err,
                   "nccl log %s: NCCL %s (line %d): collsim reproduces the channel choice of NCCL "
                   "2.8 and later; name the version (spec key nccl, --nccl-version) to take its "
                   "rule",
                   path, log->version ? log->version_text : "version not printed",
                   log->version_line);
    if (rc != 0) {
        cs_ncclinfo_free(log);
        return rc;
    }
    o->gpus = log->nranks;
    if (o->nodes == 0 && log->nnodes > 0)
        o->nodes = log->nnodes;
    if (o->channels == 0 && log->nchannels > 0)
        o->channels = log->nchannels;
    if (o->nccl_version == 0)
        o->nccl_version = log->version;
    K = log->nchannels > 0 ? log->nchannels : log->nrings;
    if ((rings = malloc((size_t)(K > 0 ? K : 1) * (size_t)log->nranks * sizeof(int))) == NULL) {
        cs_ncclinfo_free(log);
        return usage(err, "out of memory");
    }
    for (int k = 0; k < K; k++)
        if (cs_ncclinfo_ring(log, k) != NULL)
            memcpy(rings + (size_t)n++ * (size_t)log->nranks, cs_ncclinfo_ring(log, k),
                   (size_t)log->nranks * sizeof(int));
    o->rings = n > 0 ? rings : NULL;
    o->nrings = n;
    if (n == 0)
        free(rings);
    cs_ncclinfo_free(log);
    return 0;
}

/* nccl's own defaults and the options it refuses, with the log's communicator. */
static int nccl_opts_log(const struct cs_gen_opts *in, struct cs_gen_opts *o, struct cs_error *err)
{
    int rc;

    shared_defaults(in, o);
    o->rings = NULL;
    o->nrings = 0;
    if (in->nccl_log != NULL && (rc = nccl_log_opts(in->nccl_log, o, err)) != 0)
        return rc;
    if (o->nccl_version == 0)
        o->nccl_version = CS_NCCL_DEFAULT_VERSION;
    if (o->channels == 0)
        o->channels = CS_NCCL_DEFAULT_CHANNELS;
    if (o->nodes == 0)
        o->nodes = 1;
    if (o->instances > 1 || o->per_node || o->min_bytes || o->max_bytes)
        return usage(err, "nccl sets its own instances (1), ring order and size window");
    if (o->size_bytes < 1 || o->size_bytes > CS_GEN_MAX_WINDOW_BYTES)
        return usage(err, "nccl needs the size NCCL chooses for (--size, spec key size), from 1 "
                          "to 1T");
    if (o->gpus < 2)
        return usage(err, "--gpus must be at least 2 (got %d)", o->gpus);
    if (o->nodes < 1 || o->nodes > o->gpus || o->gpus % o->nodes != 0)
        return usage(err, "--nodes %d does not divide --gpus %d", o->nodes, o->gpus);
    if (o->machine_set && o->machine.inter_GBps == 0) /* one HDR NIC's 24 GB/s per GPU */
        o->machine.inter_GBps = 24.0 * o->gpus / o->nodes;
    if (o->coll == CS_COLL_ALLTOALL && o->proto != CS_PROTO_SIMPLE)
        return usage(err, "NCCL runs AllToAll as point-to-point sends in Simple, not %s",
                     cs_proto_name(o->proto));
    if (o->nccl_algo == CS_NCCL_ALGO_TREE && o->coll != CS_COLL_ALLREDUCE)
        return usage(err, "NCCL's tree runs AllReduce only (not %s)", coll_word(o));
    if (o->nccl_algo == CS_NCCL_ALGO_TREE && o->gpus > CS_MAX_STEPS)
        return usage(err,
                     "NCCL's tree: at most %d GPUs (a step moves a channel's G chunks, "
                     "cnt < 72)",
                     CS_MAX_STEPS);
    return 0;
}

/* nccl's own defaults and the options it refuses; o->rings is new (the log's, or NULL). */
static int nccl_opts(const struct cs_gen_opts *in, struct cs_gen_opts *o, struct cs_error *err)
{
    int rc = nccl_opts_log(in, o, err);

    if (rc != 0)
        free((int *)o->rings);
    return rc;
}

/* NCCL's algorithm for o (o->nccl_algo when forced, else cs_nccl_pick_algo on o's machine),
 * its width and size window, into o. */
static int nccl_algo_width(struct cs_gen_opts *o, struct cs_nccl_width *w, struct cs_error *err)
{
    struct cs_nccl_machine def;
    const struct cs_nccl_machine *m = o->nccl_machine;
    int G = o->gpus, cap;
    long long lo, hi;

    if (m == NULL) {
        cs_nccl_machine_default(&def, G / o->nodes);
        m = o->machine_set ? &o->machine : &def;
    }
    if (o->nccl_algo == 0 && cs_nccl_pick_algo(o->nccl_version, m, o->coll, o->proto, o->size_bytes,
                                               G, o->nodes, o->channels, &o->nccl_algo, err) != 0)
        return CS_ERR_USAGE;
    cap = o->nccl_algo == CS_NCCL_ALGO_RING && o->coll == CS_COLL_ALLREDUCE &&
                  2 * G - 1 > CS_MAX_STEPS
              ? CS_MAX_CHANNELS / 2
              : CS_MAX_CHANNELS;
    if (o->channels > cap)
        o->channels = cap;
    if (cs_nccl_algo_window(o->nccl_version, o->nccl_algo, o->proto, o->size_bytes, G, o->channels,
                            &lo, &hi, err) ||
        cs_nccl_algo_width(o->nccl_version, o->nccl_algo, o->proto, o->size_bytes, G, o->channels,
                           w, err))
        return CS_ERR_USAGE; /* err says why */
    o->channels = w->channels;
    o->min_bytes = lo;
    o->max_bytes = hi;
    return 0;
}

int cs_gen_nccl(const struct cs_gen_opts *in, struct cs_sched **out, struct cs_nccl_width *wout,
                struct cs_error *err)
{
    struct cs_gen_opts o;
    struct cs_nccl_width w = {0, 1, 512, 512};
    struct cs_sched *s = NULL;
    int rc, G = in->gpus;

    if ((rc = nccl_opts(in, &o, err)) != 0)
        return rc;
    G = o.gpus;
    if (o.coll == CS_COLL_ALLTOALL) {
        o.channels = 0;
        o.nodes = 0;
        rc = cs_gen_allpairs(&o, &s, err);
    } else if ((rc = nccl_algo_width(&o, &w, err)) != 0) {
        free((int *)o.rings);
        return rc;
    } else if (o.nccl_algo == CS_NCCL_ALGO_TREE) {
        rc = nccl_tree(&o, &s, err);
    } else {
        struct cs_gen_opts r = o;

        r.per_node = o.nodes > 1 && o.rings == NULL ? G / o.nodes : 0;
        r.size_bytes = 0;
        r.nodes = 0;
        r.nccl_algo = 0;
        rc = cs_gen_ring(&r, &s, err);
    }
    free((int *)o.rings);
    if (rc == 0 && (rc = nccl_name(s, &o, &w, err)) != 0)
        cs_sched_free(s);
    if (rc != 0)
        return rc;
    if (cs_nccl_past_rule(o.nccl_version)) {
        char note[400];

        cs_sched_add_warning(s, 0, "%s", cs_nccl_rule_note(o.nccl_version, note, sizeof(note)));
    }
    s->nccl_kernel = 1;
    s->nccl_threads = w.threads;
    s->nccl_max_threads = w.max_threads;
    if (wout != NULL)
        *wout = w;
    *out = s;
    return 0;
}

/* ---- specs */

int cs_gen_variant_parse(const char *name)
{
    return strcmp(name, "split") == 0 ? 0 : strcmp(name, "v1") == 0 ? 1 : -1;
}

/* The integer keys of a generator spec. */
static const struct {
    const char *key;
    size_t offset;
} spec_keys[] = {
    {"gpus", offsetof(struct cs_gen_opts, gpus)},
    {"columns", offsetof(struct cs_gen_opts, columns)},
    {"instances", offsetof(struct cs_gen_opts, instances)},
    {"channels", offsetof(struct cs_gen_opts, channels)},
    {"per_node", offsetof(struct cs_gen_opts, per_node)},
    {"compat", offsetof(struct cs_gen_opts, compat)},
    {"nops", offsetof(struct cs_gen_opts, nops)},
    {"sms", offsetof(struct cs_gen_opts, sms)},
    {"nodes", offsetof(struct cs_gen_opts, nodes)},
};

/* The machine NCCL's tuning model sees, from a nccl spec's keys: bus=GBPS (nChannels x bwIntra of
 * its graph within a node), netbus=GBPS (between nodes), pci=1 (paths within a node are PCIe),
 * ll128=0 (NCCL keeps LL128 off), cpu=intel|amd; each starts from cs_nccl_machine_default. */
static int machine_option(const char *spec, const char *kv, const char *v, struct cs_gen_opts *o,
                          struct cs_error *err)
{
    double x;
    int b;

    if (!o->machine_set) {
        cs_nccl_machine_default(&o->machine, 8);
        o->machine.inter_GBps = 0; /* from the GPUs per node once they are known (nccl_opts) */
        o->machine_set = 1;
    }
    if (strcmp(kv, "cpu") == 0) {
        if (strcmp(v, "intel") != 0 && strcmp(v, "amd") != 0)
            return usage(err, "generator spec '%s': cpu=%s is not intel or amd", spec, v);
        o->machine.intel = strcmp(v, "intel") == 0;
        return 0;
    }
    if (strcmp(kv, "pci") == 0 || strcmp(kv, "ll128") == 0) {
        if (cs_parse_int(v, 0, 1, &b) != 0)
            return usage(err, "generator spec '%s': %s=%s is not 0 or 1", spec, kv, v);
        if (strcmp(kv, "pci") == 0)
            o->machine.intra_pci = b;
        else
            o->machine.no_ll128 = !b;
        return 0;
    }
    if (cs_parse_double(v, 0.001, 1e5, &x) != 0)
        return usage(err, "generator spec '%s': %s=%s is not a bandwidth in GB/s (0.001 to 1e5)",
                     spec, kv, v);
    if (strcmp(kv, "bus") == 0)
        o->machine.intra_GBps = x;
    else
        o->machine.inter_GBps = x;
    return 0;
}

/* Set one key=value of spec (kv, v: the key and value, split) in o. */
static int spec_option(const char *spec, const char *kv, const char *v, struct cs_gen_opts *o,
                       struct cs_error *err)
{
    int *dst = NULL;

    if (strcmp(kv, "protocol") == 0 || strcmp(kv, "proto") == 0) {
        o->proto = cs_proto_parse(v);
        if (o->proto == 0)
            return usage(err, "generator spec '%s': unknown protocol '%s'", spec, v);
        return 0;
    }
    if (strcmp(kv, "coll") == 0) {
        o->coll = cs_gen_coll_parse(v);
        if (o->coll == 0)
            return usage(err,
                         "generator spec '%s': unknown collective '%s' (allreduce, allgather, "
                         "reducescatter, alltoall)",
                         spec, v);
        return 0;
    }
    if (strcmp(kv, "variant") == 0) {
        o->variant = cs_gen_variant_parse(v);
        if (o->variant < 0)
            return usage(err, "generator spec '%s': variant=%s is not split or v1", spec, v);
        return 0;
    }
    if (strcmp(kv, "nccl") == 0) {
        struct cs_error e;

        cs_error_init(&e);
        if (cs_nccl_version_parse(v, &o->nccl_version, &e) != 0)
            return usage(err, "generator spec '%s': %s", spec, e.msg);
        return 0;
    }
    if (strcmp(kv, "algo") == 0) {
        if (cs_nccl_algo_parse(v, &o->nccl_algo) != 0)
            return usage(err, "generator spec '%s': algo=%s is not ring or tree", spec, v);
        return 0;
    }
    if (strcmp(kv, "log") == 0) {
        o->nccl_log = v;
        return 0;
    }
    if (strcmp(kv, "bus") == 0 || strcmp(kv, "netbus") == 0 || strcmp(kv, "pci") == 0 ||
        strcmp(kv, "ll128") == 0 || strcmp(kv, "cpu") == 0)
        return machine_option(spec, kv, v, o, err);
    if (strcmp(kv, "size") == 0) {
        if (cs_parse_size(v, 1, CS_GEN_MAX_WINDOW_BYTES, &o->size_bytes) != 0)
            return usage(err, "generator spec '%s': size=%s is not a size from 1 to 1T", spec, v);
        return 0;
    }
    if (strcmp(kv, "min_bytes") == 0 || strcmp(kv, "max_bytes") == 0) {
        if (cs_parse_size(v, 0, CS_GEN_MAX_WINDOW_BYTES,
                          strcmp(kv, "min_bytes") == 0 ? &o->min_bytes : &o->max_bytes) != 0)
            return usage(err, "generator spec '%s': %s=%s is not a size from 0 to 1T", spec, kv, v);
        return 0;
    }
    for (size_t i = 0; i < sizeof(spec_keys) / sizeof(spec_keys[0]) && dst == NULL; i++)
        if (strcmp(kv, spec_keys[i].key) == 0)
            dst = (int *)((char *)o + spec_keys[i].offset);
    if (dst == NULL)
        return usage(err, "generator spec '%s': unknown key '%s'", spec, kv);
    if (cs_parse_int(v, 0, 1000000, dst) != 0)
        return usage(err, "generator spec '%s': %s=%s is not a count", spec, kv, v);
    if (*dst == 0 && (dst == &o->gpus || dst == &o->columns || dst == &o->channels ||
                      dst == &o->per_node || dst == &o->nodes))
        return usage(err,
                     "generator spec '%s': %s=0: must be at least 1 (leave it out for the "
                     "default)",
                     spec, kv);
    if (dst == &o->instances && o->instances == 0)
        o->instances = -1; /* explicit 0 is an error, not the default */
    if (dst == &o->sms && o->sms == 0)
        o->sms = -1;
    return 0;
}

/* Run generator `name` on o, after refusing keys that belong to another generator. */
static int run_generator(const char *spec, const char *name, const struct cs_gen_opts *o,
                         struct cs_sched **out, struct cs_error *err)
{
    if (strcmp(name, "hierarchical") != 0 && (o->columns || o->compat || o->nops || o->variant))
        return usage(err,
                     "generator spec '%s': columns, compat, nops and variant are for hierarchical",
                     spec);
    if (strcmp(name, "ring") != 0 && (o->per_node || (o->channels && strcmp(name, "nccl") != 0)))
        return usage(err,
                     "generator spec '%s': channels and per_node are for ring (channels also "
                     "for nccl)",
                     spec);
    if (strcmp(name, "nccl") != 0 && (o->size_bytes || o->nccl_version || o->nodes ||
                                      o->nccl_algo || o->machine_set || o->nccl_log))
        return usage(err,
                     "generator spec '%s': size, nccl, nodes, algo, log, bus, netbus, pci, ll128 "
                     "and cpu are for nccl",
                     spec);
    if (strcmp(name, "hierarchical") == 0 && o->coll && o->coll != CS_COLL_ALLREDUCE)
        return usage(err, "generator spec '%s': hierarchical writes allreduce only", spec);
    if (strcmp(name, "ring") != 0 && o->reps) { /* only the ring is written by representatives */
        struct cs_gen_opts whole = *o;

        whole.reps = 0;
        return run_generator(spec, name, &whole, out, err);
    }
    if (strcmp(name, "hierarchical") == 0)
        return cs_gen_hierarchical(o, out, err);
    if (strcmp(name, "ring") == 0)
        return cs_gen_ring(o, out, err);
    if (strcmp(name, "allpairs") == 0)
        return cs_gen_allpairs(o, out, err);
    if (strcmp(name, "nccl") == 0)
        return cs_gen_nccl(o, out, NULL, err);
    return usage(err, "unknown generator '%s' (hierarchical, ring, allpairs, nccl)", name);
}

/* Parse spec into o (zeroed first) and its generator's name into buf (512 bytes): 0, or
 * CS_ERR_USAGE with err set. */
static int spec_parse(const char *spec, char *buf, struct cs_gen_opts *o, struct cs_error *err)
{
    char *rest, *kv, *save = NULL;
    const char *keys[256]; /* a spec is under 512 bytes: fewer keys than this */
    int rc, nkeys = 0;

    memset(o, 0, sizeof(*o));
    if (spec == NULL || strlen(spec) >= 512)
        return usage(err, "generator spec missing or too long");
    strcpy(buf, spec);
    rest = strchr(buf, ':');
    if (rest)
        *rest++ = '\0';
    if (strcmp(buf, "gen") == 0)
        return usage(err,
                     "generator spec '%s': without 'gen:' here ('gen:SPEC' is how case files, "
                     "sweeps and baselines name a spec; --gen takes SPEC)",
                     spec);
    for (kv = rest ? strtok_r(rest, ",", &save) : NULL; kv; kv = strtok_r(NULL, ",", &save)) {
        char *v = strchr(kv, '=');

        if (v == NULL)
            return usage(err, "generator spec '%s': '%s' is not key=value", spec, kv);
        *v++ = '\0';
        for (int k = 0; k < nkeys; k++) /* each key once */
            if (strcmp(keys[k], kv) == 0)
                return usage(err, "generator spec '%s': key '%s' given twice", spec, kv);
        if (nkeys < (int)(sizeof(keys) / sizeof(keys[0])))
            keys[nkeys++] = kv;
        if ((rc = spec_option(spec, kv, v, o, err)) != 0)
            return rc;
    }
    return 0;
}

int cs_gen_from_spec(const char *spec, struct cs_sched **out, struct cs_error *err)
{
    return cs_gen_from_spec_reps(spec, 0, out, err);
}

int cs_gen_from_spec_reps(const char *spec, int reps, struct cs_sched **out, struct cs_error *err)
{
    struct cs_gen_opts o;
    char buf[512];
    int rc = spec_parse(spec, buf, &o, err);

    o.reps = reps;
    return rc != 0 ? rc : run_generator(spec, buf, &o, out, err);
}

int cs_gen_nccl_spec_width(const char *spec, struct cs_nccl_width *w, struct cs_error *err)
{
    struct cs_gen_opts o, n;
    char buf[512];
    int rc = spec_parse(spec, buf, &o, err);

    if (rc == 0 && strcmp(buf, "nccl") != 0)
        return usage(err, "generator spec '%s' is not nccl", spec);
    if (rc == 0)
        rc = nccl_opts(&o, &n, err);
    if (rc != 0)
        return rc;
    free((int *)n.rings);
    if (n.coll == CS_COLL_ALLTOALL) {
        *w = (struct cs_nccl_width){0, 1, 512, 512};
        return 0;
    }
    return nccl_algo_width(&n, w, err);
}

int cs_gen_nccl_spec_pick(const char *spec, enum cs_proto *proto, struct cs_error *err)
{
    struct cs_gen_opts o, n;
    struct cs_nccl_machine def;
    const struct cs_nccl_machine *m;
    enum cs_nccl_algo algo;
    char buf[512];
    int rc = spec_parse(spec, buf, &o, err);

    if (rc == 0 && strcmp(buf, "nccl") != 0)
        return usage(err, "generator spec '%s' is not nccl", spec);
    if (rc == 0)
        rc = nccl_opts(&o, &n, err);
    if (rc != 0)
        return rc;
    free((int *)n.rings); /* the pick needs the communicator, not its ring orders */
    n.rings = NULL;
    if (n.coll == CS_COLL_ALLTOALL) {
        *proto = CS_PROTO_SIMPLE;
        return 0;
    }
    cs_nccl_machine_default(&def, n.gpus / n.nodes);
    m = n.machine_set ? &n.machine : &def;
    if (cs_nccl_pick(n.nccl_version, m, n.coll, n.size_bytes, n.gpus, n.nodes, n.channels,
                     n.nccl_algo, &algo, proto, err) != 0)
        return CS_ERR_USAGE;
    return 0;
}
