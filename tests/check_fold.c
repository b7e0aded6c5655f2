/* check_fold.c: rank shifts of a plan, the proof on routes (images, link parameters, shared links),
 * the folded connections and plan, and folded replays equal to full ones to every digit: on a
 * ring across nodes, refused on a platform with one slower link and on a plan with one step
 * changed, and over the corpus of schedules/ and the shared MSCCL XMLs (verdicts and times at 1
 * KiB, 1 MiB and 1 GiB). */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fold.h"
#include "gen.h"
#include "plan.h"
#include "platform.h"
#include "predict.h"
#include "replay.h"
#include "runner.h"
#include "testplat.h"
#include "xml.h"

static struct cs_plan *ring_plan(int gpus, const char *proto, long long size)
{
    char spec[128];
    struct cs_sched *s = NULL;
    struct cs_plan *plan = NULL;

    snprintf(spec, sizeof(spec), "ring:gpus=%d,channels=1,instances=1,protocol=%s", gpus, proto);
    ck_assert_int_eq(cs_gen_from_spec(spec, &s, NULL), 0);
    ck_assert_int_eq(cs_plan_build(s, size, 4, 0, &plan, NULL), 0);
    cs_sched_free(s);
    return plan;
}

static struct cs_platform *dgx(int nodes, char *path)
{
    struct cs_platform_spec spec;
    struct cs_params p;

    cs_params_init(&p);
    cs_platform_spec_init(&spec, CS_FAM_DGX);
    spec.nodes = nodes;
    return test_platform_spec(&spec, &p, path);
}

START_TEST(test_plan_shifts)
{
    struct cs_plan *plan = ring_plan(16, "LL", 1 << 20);
    struct cs_params par;
    int ks[16], n;
    char why[200];

    cs_params_init(&par);
    /* a ring is the same from every rank: every divisor of 16 */
    n = cs_fold_plan_shifts(plan, &par, ks, 16, why, sizeof(why));
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(ks[0], 1);
    ck_assert_int_eq(ks[3], 8);
    /* a process driving 4 GPUs launches them in turn: shifts by multiples of 4 only */
    par.gpus_per_process = 4;
    par.launch_gpu_s = 1e-6;
    n = cs_fold_plan_shifts(plan, &par, ks, 16, why, sizeof(why));
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(ks[0], 4);
    cs_params_init(&par);
    /* one step of rank 5 moves one more chunk: no shift holds, and why names the step */
    plan->tbs[plan->gpu_tb0[5]].ops[0].cnt++;
    n = cs_fold_plan_shifts(plan, &par, ks, 16, why, sizeof(why));
    ck_assert_int_eq(n, 0);
    ck_assert_msg(strstr(why, "differs") != NULL, "%s", why);
    plan->tbs[plan->gpu_tb0[5]].ops[0].cnt--;
    /* one dependency more on rank 3 */
    plan->tbs[plan->gpu_tb0[3]].ops[1].hasdep ^= 1;
    ck_assert_int_eq(cs_fold_plan_shifts(plan, &par, ks, 16, NULL, 0), 0);
    cs_plan_free(plan);
    /* NCCL's Simple kernels receive in place within a process (replay.c): with 4 GPUs a process
     * and no launch delay, shifts by multiples of 4 only; with all 16 in one, every divisor */
    plan = ring_plan(16, "Simple", 1 << 20);
    plan->nccl_kernel = 1;
    par.gpus_per_process = 4;
    par.launch_gpu_s = 0;
    n = cs_fold_plan_shifts(plan, &par, ks, 16, why, sizeof(why));
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(ks[0], 4);
    ck_assert_int_eq(cs_fold_plan_shifts(plan, &par, ks, 1, why, sizeof(why)), 1);
    par.gpus_per_process = 16;
    ck_assert_int_eq(cs_fold_plan_shifts(plan, &par, ks, 16, why, sizeof(why)), 4);
    par.gpus_per_process = 4;
    plan->nccl_kernel = 0; /* the MSCCL executor copies either way */
    n = cs_fold_plan_shifts(plan, &par, ks, 16, why, sizeof(why));
    ck_assert_msg(n == 4, "%d: %s", n, why);
    cs_plan_free(plan);
}
END_TEST

/* The default hierarchical generator reduces in peer-relative order: shifting every rank by a
 * column (R ranks) maps its plan onto itself, for 2, 4 and 8 columns; v1 (the compact layout in
 * the seed's absolute order: GPU 0 waits on 1..R-1, GPU 1 on 0, 2..) has no shift with 4. */
START_TEST(test_hier_shifts)
{
    static const struct {
        const char *spec;
        int first; /* the smallest shift, 0 for none */
    } cases[] = {
        {"hierarchical:gpus=8,columns=2,protocol=LL", 4},
        {"hierarchical:gpus=16,columns=4,protocol=LL", 4},
        {"hierarchical:gpus=32,columns=8,protocol=Simple", 4},
        {"hierarchical:gpus=64,columns=4,protocol=LL128,sms=132", 16},
        {"hierarchical:gpus=16,columns=4,protocol=LL,variant=v1", 0},
    };
    struct cs_params par;

    cs_params_init(&par);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cs_sched *s = NULL;
        struct cs_plan *plan = NULL;
        int ks[64], n;
        char why[200] = "";

        ck_assert_int_eq(cs_gen_from_spec(cases[i].spec, &s, NULL), 0);
        ck_assert_int_eq(cs_plan_build(s, 1 << 20, 4, 0, &plan, NULL), 0);
        n = cs_fold_plan_shifts(plan, &par, ks, 64, why, sizeof(why));
        if (cases[i].first == 0)
            ck_assert_msg(n == 0 && strstr(why, "differs") != NULL, "%s: %d shifts (%s)",
                          cases[i].spec, n, why);
        else
            ck_assert_msg(n > 0 && ks[0] == cases[i].first, "%s: %d shifts, first %d (%s)",
                          cases[i].spec, n, n > 0 ? ks[0] : 0, why);
        cs_plan_free(plan);
        cs_sched_free(s);
    }
}
END_TEST

/* A network of n GPUs in nodes of 2: GPU g's out link 2g and in link 2g + 1 (one link each way),
 * and, with backbone, a shared link 2n on every pair that leaves a node. Pairs: the ring g ->
 * g + 1. */
static void ring_net(struct cs_fold_net *net, int n, int backbone, int (*pairs)[2], int *first,
                     int *route, struct cs_fold_link *links)
{
    int h = 0;

    for (int g = 0; g < n; g++) {
        pairs[g][0] = g;
        pairs[g][1] = (g + 1) % n;
        first[g] = h;
        route[h++] = 2 * g;
        if (backbone && g % 2 == 1)
            route[h++] = 2 * n;
        route[h++] = 2 * ((g + 1) % n) + 1;
    }
    first[n] = h;
    for (int l = 0; l <= 2 * n; l++)
        links[l] = (struct cs_fold_link){1e9, 1e-6, 1, 1};
    *net = (struct cs_fold_net){n, pairs, first, route, 2 * n + 1, links};
}

START_TEST(test_check_net)
{
    int pairs[8][2], first[9], route[32];
    struct cs_fold_link links[17];
    struct cs_fold_net net;
    char why[200];

    /* rail links only: every shift that keeps the node boundaries (2, 4) holds; 1 maps the link
     * pattern of an intra-node hop onto an inter-node one (different route lengths only with a
     * backbone: without one, shift 1 holds too) */
    ring_net(&net, 8, 0, pairs, first, route, links);
    ck_assert_int_eq(cs_fold_check_net(&net, 8, 1, why, sizeof(why)), 1);
    ck_assert_int_eq(cs_fold_check_net(&net, 8, 2, why, sizeof(why)), 1);
    /* one slower link: its images differ */
    links[5].bw_Bps = 5e8;
    ck_assert_int_eq(cs_fold_check_net(&net, 8, 2, why, sizeof(why)), 0);
    ck_assert_msg(strstr(why, "does not map") != NULL, "%s", why);
    links[5].bw_Bps = 1e9;
    links[5].shared = 0;
    ck_assert_int_eq(cs_fold_check_net(&net, 8, 2, NULL, 0), 0);
    /* a backbone shared by every node's outgoing hop: route lengths differ under shift 1, and
     * under shift 2 the folded hop 1 -> 2 meets 3 -> 4, 5 -> 6, 7 -> 0 there */
    ring_net(&net, 8, 1, pairs, first, route, links);
    ck_assert_int_eq(cs_fold_check_net(&net, 8, 1, why, sizeof(why)), 0);
    ck_assert_msg(strstr(why, "no image") != NULL, "%s", why);
    ck_assert_int_eq(cs_fold_check_net(&net, 8, 2, why, sizeof(why)), 0);
    ck_assert_msg(strstr(why, "other orbits") != NULL, "%s", why);
    /* a fatpipe backbone couples no flows: shift 2 holds */
    links[16].shared = 0;
    ck_assert_int_eq(cs_fold_check_net(&net, 8, 2, why, sizeof(why)), 1);
    /* a link map that is not one to one: two links onto one */
    ring_net(&net, 8, 0, pairs, first, route, links);
    route[first[2]] = 2 * 1; /* 2 -> 3 leaves through GPU 1's link, whose image is 3's */
    ck_assert_int_eq(cs_fold_check_net(&net, 8, 2, why, sizeof(why)), 0);
}
END_TEST

/* n GPUs, GPU g's up link 2g and down link 2g + 1; pairs g -> g + 1 and g -> g + 2 over [up of
 * the sender, down of the receiver], and with extra the receiver's down link of g + 3 too (a
 * route crossing two links of one orbit under the shift by 2). Sorted pairs, as fold_net gives. */
static void fan_net(struct cs_fold_net *net, int n, int extra, int (*pairs)[2], int *first,
                    int *route, struct cs_fold_link *links)
{
    int h = 0, i = 0;

    for (int g = 0; g < n; g++) {
        int d1 = (g + 1) % n, d2 = (g + 2) % n;
        int lo = d1 < d2 ? d1 : d2, hi = d1 < d2 ? d2 : d1;

        for (int dst = lo; dst <= hi; dst += hi - lo) {
            pairs[i][0] = g;
            pairs[i][1] = dst;
            first[i++] = h;
            route[h++] = 2 * g;
            route[h++] = 2 * dst + 1;
            if (extra && dst == d1)
                route[h++] = 2 * ((g + 3) % n) + 1;
        }
    }
    first[i] = h;
    for (int l = 0; l < 2 * n; l++)
        links[l] = (struct cs_fold_link){1e9, 1e-6, 1, 1};
    *net = (struct cs_fold_net){i, pairs, first, route, 2 * n, links};
}

/* The quotient (fold.h): down links that carry flows from every orbit fold onto one link per
 * orbit; refused for a link its own image (a backbone) or a route crossing one orbit twice. */
START_TEST(test_check_quotient)
{
    int pairs[16][2], first[17], route[64], rep[17];
    struct cs_fold_link links[17];
    struct cs_fold_net net;
    char why[200];

    fan_net(&net, 8, 0, pairs, first, route, links);
    /* GPU 1's down link carries 0 -> 1 (folded by 2) and 7 -> 1 (not): no plain fold */
    ck_assert_int_eq(cs_fold_check_net(&net, 8, 2, why, sizeof(why)), 0);
    ck_assert_msg(strstr(why, "other orbits") != NULL, "%s", why);
    ck_assert_int_eq(cs_fold_check_quotient(&net, 8, 2, rep, why, sizeof(why)), 1);
    /* orbits of 4 links under the shift by 2, the first link of each its representative */
    ck_assert_int_eq(rep[2 * 6], 0);     /* up of 6: up of 0 */
    ck_assert_int_eq(rep[2 * 5], 2);     /* up of 5: up of 1 */
    ck_assert_int_eq(rep[2 * 4 + 1], 1); /* down of 4: down of 0 */
    ck_assert_int_eq(rep[2 * 7 + 1], 3); /* down of 7: down of 1 */
    /* under the shift by 1 every down link is one orbit of 8: 0 -> 1 and 0 -> 2 cross it once
     * each, so the quotient holds with one down link for all */
    ck_assert_int_eq(cs_fold_check_quotient(&net, 8, 1, rep, why, sizeof(why)), 1);
    ck_assert_int_eq(rep[2 * 5 + 1], 1);
    /* a slower link breaks the map */
    links[9].bw_Bps = 5e8;
    ck_assert_int_eq(cs_fold_check_quotient(&net, 8, 2, rep, why, sizeof(why)), 0);
    ck_assert_msg(strstr(why, "does not map") != NULL, "%s", why);
    /* a route over two down links of one orbit (g + 1's and g + 3's under the shift by 2) */
    fan_net(&net, 8, 1, pairs, first, route, links);
    ck_assert_int_eq(cs_fold_check_quotient(&net, 8, 2, rep, why, sizeof(why)), 0);
    ck_assert_msg(strstr(why, "two shared links of one orbit") != NULL, "%s", why);
    /* as a fatpipe it couples no flows: accepted */
    for (int l = 1; l < 16; l += 2)
        links[l].shared = 0;
    ck_assert_int_eq(cs_fold_check_quotient(&net, 8, 2, rep, why, sizeof(why)), 1);
    /* a backbone shared by every node's outgoing hop is its own image under every shift: each
     * folded flow on it stands for several of the full replay's */
    {
        int rp[8][2], rf[9], rr[32];
        struct cs_fold_link rl[17];

        ring_net(&net, 8, 1, rp, rf, rr, rl);
        ck_assert_int_eq(cs_fold_check_quotient(&net, 8, 2, rep, why, sizeof(why)), 0);
        ck_assert_msg(strstr(why, "its own image") != NULL, "%s", why);
    }
}
END_TEST

START_TEST(test_conn_and_plan)
{
    struct cs_fold f = {512, 8, 64, 0};
    struct cs_plan *plan = ring_plan(16, "Simple", 1 << 20), folded;
    struct cs_fold f16 = {16, 8, 2, 0};
    int s = 7, d = 8;

    cs_fold_conn(&f, &s, &d);
    ck_assert(s == 7 && d == 8);
    s = 511, d = 0; /* the hop into rank 0 is the orbit of 7 -> 8 */
    cs_fold_conn(&f, &s, &d);
    ck_assert(s == 7 && d == 8);
    s = 300, d = 12; /* 300 = 37 x 8 + 4 */
    cs_fold_conn(&f, &s, &d);
    ck_assert(s == 4 && d == (12 - 296 + 512));
    ck_assert_int_eq(cs_fold_plan_init(&folded, plan, &f16), 0);
    ck_assert_int_eq(folded.ntbs, plan->gpu_tb0[8]);
    ck_assert_int_eq(folded.ngpus, 16);
    ck_assert_int_eq(folded.gpu_tb0[9] - folded.gpu_tb0[8], 0);
    ck_assert(folded.tbs == plan->tbs);
    cs_fold_plan_cleanup(&folded);
    cs_plan_free(plan);
}
END_TEST

/* Replay plan on plat folded and in full: the same status and time, calls and transfers; returns
 * the folded replay's order (1: not folded). */
static int same_replay(const struct cs_plan *plan, const struct cs_platform *plat, const char *what)
{
    struct cs_replay_opts o = {0}, full = {.no_fold = 1};
    struct cs_replay_result a, b;
    int order;

    ck_assert_int_eq(cs_replay_run(plan, plat, &o, &a, NULL), 0);
    ck_assert_int_eq(cs_replay_run(plan, plat, &full, &b, NULL), 0);
    ck_assert_msg(a.status == b.status && a.time_s == b.time_s, "%s: %.17g vs %.17g (%s)", what,
                  a.time_s, b.time_s, a.fold);
    ck_assert(a.ncalls == b.ncalls && a.ntransfers == b.ntransfers);
    ck_assert_int_eq(b.fold_order, 0);
    order = a.fold_order > 1 ? a.fold_order : 1;
    cs_replay_result_cleanup(&a);
    cs_replay_result_cleanup(&b);
    return order;
}

START_TEST(test_ring_nodes)
{
    char path[64];
    struct cs_platform *plat = dgx(4, path);
    const char *protos[] = {"LL", "LL128", "Simple"};

    for (int q = 0; q < 3; q++) {
        struct cs_plan *plan = ring_plan(32, protos[q], 4 << 20);

        /* across nodes the rail NICs keep shifts by the node's 8 GPUs */
        ck_assert_int_eq(same_replay(plan, plat, protos[q]), 4);
        cs_plan_free(plan);
    }
    unlink(path);
    cs_platform_free(plat);
}
END_TEST

/* plat's file with the bandwidth of link id (the first of its attributes) replaced by bw. */
static struct cs_platform *edit_link(const char *from, const char *id, const char *bw, char *path)
{
    FILE *in = fopen(from, "r"), *out;
    char line[4096], key[128];
    struct cs_platform *plat = NULL;
    int fd, edited = 0;

    snprintf(path, 64, "/tmp/cs-plat-XXXXXX");
    fd = mkstemp(path);
    ck_assert(in != NULL && fd >= 0);
    out = fdopen(fd, "w");
    snprintf(key, sizeof(key), "<link id=\"%s\" bandwidth=\"", id);
    while (fgets(line, sizeof(line), in) != NULL) {
        char *p = strstr(line, key);

        if (p != NULL) {
            char *q = strchr(p + strlen(key), '"');

            *p = '\0';
            fprintf(out, "%s%s%s%s", line, key, bw, q);
            edited = 1;
        } else {
            fputs(line, out);
        }
    }
    fclose(in);
    fclose(out);
    ck_assert(edited);
    ck_assert_int_eq(cs_platform_read(path, &plat, NULL), 0);
    return plat;
}

START_TEST(test_broken_symmetry)
{
    char path[64], slow_path[64], idle_path[64];
    /* gpu15's NIC carries the hop 15 -> 0; gpu13's carries nothing */
    struct cs_platform *plat = dgx(2, path),
                       *slow = edit_link(path, "gpu15_nic", "2e+10Bps", slow_path),
                       *idle = edit_link(path, "gpu13_nic", "2e+10Bps", idle_path);
    struct cs_plan *plan = ring_plan(16, "LL", 1 << 20);
    struct cs_replay_opts o = {0};
    struct cs_replay_result r;

    ck_assert_int_eq(same_replay(plan, plat, "symmetric"), 2);
    /* a slower link that no connection uses breaks nothing the replay sees */
    ck_assert_int_eq(same_replay(plan, idle, "idle slow link"), 2);
    /* one NIC slower: refused, and the result is the full replay's */
    ck_assert_int_eq(same_replay(plan, slow, "slow link"), 1);
    ck_assert_int_eq(cs_replay_run(plan, slow, &o, &r, NULL), 0);
    ck_assert_msg(strstr(r.fold, "the platform breaks") != NULL, "%s", r.fold);
    cs_replay_result_cleanup(&r);
    /* one step of one rank changed: refused before any route is looked at */
    plan->tbs[plan->gpu_tb0[11]].ops[2].cnt++;
    ck_assert_int_eq(cs_replay_run(plan, plat, &o, &r, NULL), 0);
    ck_assert_int_eq(r.fold_order, 0);
    ck_assert_msg(strstr(r.fold, "no rank shift maps the schedule") != NULL, "%s", r.fold);
    cs_replay_result_cleanup(&r);
    ck_assert_int_eq(same_replay(plan, plat, "changed step"), 1);
    cs_plan_free(plan);
    unlink(path);
    unlink(slow_path);
    unlink(idle_path);
    cs_platform_free(plat);
    cs_platform_free(slow);
    cs_platform_free(idle);
}
END_TEST

START_TEST(test_deadlock)
{
    char path[64];
    struct cs_platform *plat = dgx(2, path);
    struct cs_plan *plan = ring_plan(16, "LL", 1 << 20);
    struct cs_replay_opts o = {0}, full = {.no_fold = 1};
    struct cs_replay_result a, b;

    /* every rank receives before its first send: all wait for data, the same on every rank */
    for (int g = 0; g < 16; g++)
        plan->tbs[plan->gpu_tb0[g]].ops[0].type = CS_STEP_R;
    ck_assert_int_eq(cs_fold_plan_shifts(plan, &plat->params, (int[16]){0}, 16, NULL, 0), 4);
    ck_assert_int_eq(cs_replay_run(plan, plat, &o, &a, NULL), 0);
    ck_assert_int_eq(cs_replay_run(plan, plat, &full, &b, NULL), 0);
    ck_assert(a.status == CS_REPLAY_DEADLOCK && b.status == CS_REPLAY_DEADLOCK);
    /* replayed in full for its report: every rank's tbs in it */
    ck_assert_int_eq(a.nblocked, 16);
    ck_assert_int_eq(a.nblocked, b.nblocked);
    ck_assert(a.report != NULL && b.report != NULL);
    ck_assert_str_eq(a.report, b.report);
    ck_assert_int_eq(a.fold_order, 0);
    ck_assert_msg(strstr(a.fold, "the folded replay deadlocks") != NULL, "%s", a.fold);
    cs_replay_result_cleanup(&a);
    cs_replay_result_cleanup(&b);
    cs_plan_free(plan);
    unlink(path);
    cs_platform_free(plat);
}
END_TEST

/* The corpus: platforms by GPU count, where ranks can fold: DGX nodes for multiples of 8, else an
 * a100-hier of two columns (or one). */
static struct cs_platform *corpus_platform(int g, char paths[][64], struct cs_platform **cache)
{
    struct cs_platform_spec spec;
    struct cs_params p;

    if (g < 1 || g > 64)
        return NULL;
    if (cache[g] != NULL)
        return cache[g];
    cs_params_init(&p);
    if (g % 8 == 0) {
        cs_platform_spec_init(&spec, CS_FAM_DGX);
        spec.nodes = g / 8;
    } else {
        cs_platform_spec_init(&spec, CS_FAM_HIER);
        spec.rows = g % 2 == 0 ? g / 2 : g;
        spec.columns = g % 2 == 0 ? 2 : 1;
    }
    cache[g] = test_platform_spec(&spec, &p, paths[g]);
    return cache[g];
}

/* Every XML of dir predicted at 1 KiB, 1 MiB and 1 GiB folded and in full: the same rows to every
 * digit. Adds the files to *nfiles and the folded rows to *nfolded. */
static void corpus_dir(const char *dir, int *nfiles, int *nfolded, int *nquotient)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char paths[65][64];
    struct cs_platform *cache[65] = {0};
    int ndeadlocks = 0;

    ck_assert_msg(d != NULL, "%s", dir);
    while ((e = readdir(d)) != NULL) {
        char path[4600];
        struct cs_sched *s = NULL;
        struct cs_platform *plat;
        struct cs_predict_opts o = {0}, full = {0};
        struct cs_predict_row a[3], b[3];
        long long sizes[3];
        size_t len = strlen(e->d_name);

        if (len < 5 || strcmp(e->d_name + len - 4, ".xml") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        ck_assert_msg(cs_sched_read_xml(path, &s, NULL) == 0, "%s", path);
        plat = corpus_platform(s->ngpus, paths, cache);
        ck_assert_msg(plat != NULL, "%s: %d GPUs", path, s->ngpus);
        sizes[0] = cs_plan_round_size(s, 1024, 4);
        sizes[1] = cs_plan_round_size(s, 1 << 20, 4);
        sizes[2] = cs_plan_round_size(s, 1LL << 30, 4);
        o.type_bytes = full.type_bytes = 4;
        o.keep_going = full.keep_going = 1;
        full.replay.no_fold = 1;
        ck_assert_msg(cs_predict_run(s, plat, &o, sizes, 3, a, NULL) == 0, "%s", path);
        ck_assert_msg(cs_predict_run(s, plat, &full, sizes, 3, b, NULL) == 0, "%s", path);
        for (int k = 0; k < 3; k++) {
            ck_assert_msg(strcmp(cs_predict_status_name(&a[k]), cs_predict_status_name(&b[k])) == 0,
                          "%s at %lld", path, sizes[k]);
            ck_assert_msg(a[k].res.time_s == b[k].res.time_s && a[k].time_us == b[k].time_us,
                          "%s at %lld: %.17g folded, %.17g in full (%s)", path, sizes[k],
                          a[k].res.time_s, b[k].res.time_s, a[k].res.fold);
            ck_assert(a[k].res.ncalls == b[k].res.ncalls);
            ck_assert(a[k].replayed_iters == b[k].replayed_iters);
            ck_assert((a[k].res.report == NULL) == (b[k].res.report == NULL));
            if (a[k].res.report != NULL)
                ck_assert_str_eq(a[k].res.report, b[k].res.report);
            *nfolded += a[k].refused == NULL && a[k].hang == NULL && a[k].res.fold_order > 1;
            *nquotient += a[k].refused == NULL && a[k].hang == NULL && a[k].res.fold_order > 1 &&
                          strstr(a[k].res.fold, "quotient network") != NULL;
            /* a folded deadlock is replayed in full: the same report, and the reason */
            if (a[k].res.status == CS_REPLAY_DEADLOCK && strstr(a[k].res.fold, "deadlocks"))
                ndeadlocks++;
            cs_predict_row_cleanup(&a[k]);
            cs_predict_row_cleanup(&b[k]);
        }
        cs_sched_free(s);
        ++*nfiles;
    }
    closedir(d);
    fprintf(stderr,
            "%s: %d files, %d rows folded (%d on a quotient network), %d folded deadlocks replayed "
            "in full\n",
            dir, *nfiles, *nfolded, *nquotient, ndeadlocks);
    for (int g = 0; g <= 64; g++)
        if (cache[g] != NULL) {
            unlink(paths[g]);
            cs_platform_free(cache[g]);
        }
}

START_TEST(test_corpus_schedules)
{
    int nfiles = 0, nfolded = 0, nquotient = 0;
    char dir[4200];

    snprintf(dir, sizeof(dir), "%s/schedules", test_srcdir());
    corpus_dir(dir, &nfiles, &nfolded, &nquotient);
    ck_assert_int_ge(nfiles, 20);
    /* the rings and all-pairs fold on one DGX node; the hierarchical schedules on two columns
     * share each GPU's PCIe links between the columns: a quotient network */
    ck_assert_int_ge(nfolded, 12);
    ck_assert_int_ge(nquotient, 3);
}
END_TEST

START_TEST(test_corpus_shared)
{
    char dir[4200];
    int nfiles = 0, nfolded = 0, nquotient = 0;

    snprintf(dir, sizeof(dir), "%s/msccl-xml", test_shared_data());
    corpus_dir(dir, &nfiles, &nfolded, &nquotient);
    ck_assert_int_ge(nfiles, 50);
    ck_assert_int_ge(nfolded, 1);
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {test_plan_shifts, 1},      {test_hier_shifts, 1},
        {test_check_net, 1},        {test_check_quotient, 1},
        {test_conn_and_plan, 1},    {test_ring_nodes, 1},
        {test_broken_symmetry, 1},  {test_deadlock, 1},
        {test_corpus_schedules, 1}, {NULL, 0},
    };
    const struct test_case shared[] = {{test_corpus_shared, 1}, {NULL, 0}};

    return test_run("fold", 600, tests, shared);
}
