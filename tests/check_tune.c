/* check_tune.c: the fastest variant per size range, reading a sweep for it, and the plan. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "runner.h"
#include "testutil.h"
#include "tune.h"
#include "xml.h"

#define N(a) ((long)(sizeof(a) / sizeof((a)[0])))
/* An observation at its own (nominal) size. */
#define O(v, size, t, ok)                                                                          \
    {                                                                                              \
        v, size, t, ok, 0, 0, 0, 0                                                                 \
    }

static struct cs_tune_range *ranges(const struct cs_tune_obs *o, long n, int *nr)
{
    struct cs_tune_range *r = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_tune_ranges(o, n, &r, nr, &err) == 0, "%s", err.msg);
    return r;
}

/* Three variants, each fastest somewhere; input shuffled. */
START_TEST(known_fastest)
{
    const struct cs_tune_obs o[] = {
        O(2, 1048576, 100, 1), O(0, 1024, 5, 1),      O(1, 1024, 9, 1),    O(2, 1024, 20, 1),
        O(0, 4096, 6, 1),      O(1, 4096, 9.5, 1),    O(2, 4096, 20, 1),   O(0, 16384, 30, 1),
        O(1, 16384, 11, 1),    O(2, 16384, 21, 1),    O(0, 65536, 90, 1),  O(1, 65536, 20, 1),
        O(2, 65536, 24, 1),    O(0, 262144, 1, 0),    O(1, 262144, 60, 1), O(2, 262144, 40, 1),
        O(0, 1048576, 1, 0),   O(1, 1048576, 200, 1),
    };
    int nr;
    struct cs_tune_range *r = ranges(o, N(o), &nr);

    ck_assert_int_eq(nr, 3);
    ck_assert_int_eq(r[0].variant, 0);
    ck_assert_int_eq(r[0].min_bytes, 1024);
    ck_assert_int_eq(r[0].max_bytes, 16383);
    ck_assert_int_eq(r[0].last_size, 4096);
    ck_assert_int_eq(r[1].variant, 1);
    ck_assert_int_eq(r[1].min_bytes, 16384);
    ck_assert_int_eq(r[1].max_bytes, 262143);
    /* variant 0 is "fastest" at 256K only if deadlocks counted: they must not */
    ck_assert_int_eq(r[2].variant, 2);
    ck_assert_int_eq(r[2].min_bytes, 262144);
    ck_assert_int_eq(r[2].max_bytes, 1048576);
    free(r);
}
END_TEST

/* A size where every variant deadlocks leaves a gap; ties go to the lower variant. */
START_TEST(gaps_and_ties)
{
    const struct cs_tune_obs o[] = {
        O(0, 1024, 5, 1), O(1, 1024, 5, 1), O(0, 2048, 1, 0), O(1, 2048, 1, 0),
        O(0, 4096, 7, 1), O(1, 4096, 6, 1), O(0, 8192, 8, 1), O(1, 8192, 9, 1),
    };
    int nr;
    struct cs_tune_range *r = ranges(o, N(o), &nr);

    ck_assert_int_eq(nr, 3);
    ck_assert_int_eq(r[0].variant, 0);
    ck_assert_int_eq(r[0].max_bytes, 1024); /* ends at its last size: 2048 has no winner */
    ck_assert_int_eq(r[1].variant, 1);
    ck_assert_int_eq(r[1].min_bytes, 4096);
    ck_assert_int_eq(r[1].max_bytes, 8191);
    ck_assert_int_eq(r[2].variant, 0);
    ck_assert_int_eq(r[2].min_bytes, 8192);
    free(r);
}
END_TEST

/* A variant winning twice, apart, gives two ranges. */
START_TEST(same_winner_twice)
{
    const struct cs_tune_obs o[] = {
        O(0, 1, 1, 1), O(1, 1, 2, 1), O(0, 2, 3, 1), O(1, 2, 2, 1), O(0, 4, 1, 1), O(1, 4, 2, 1),
    };
    int nr;
    struct cs_tune_range *r = ranges(o, N(o), &nr);

    ck_assert_int_eq(nr, 3);
    ck_assert_int_eq(r[0].variant, 0);
    ck_assert_int_eq(r[1].variant, 1);
    ck_assert_int_eq(r[2].variant, 0);
    ck_assert_int_eq(r[2].max_bytes, 4);
    free(r);
}
END_TEST

START_TEST(bad)
{
    struct cs_tune_range *r = NULL;
    struct cs_error err;
    int nr = -1;
    const struct cs_tune_obs dup[] = {O(0, 1024, 5, 1), O(0, 1024, 6, 1)};
    const struct cs_tune_obs none[] = {O(0, 1024, 5, 0), O(1, 1024, 6, 0)};
    const struct cs_tune_obs neg[] = {O(0, 1024, -5, 1)};
    const struct cs_tune_obs nan_t[] = {O(0, 1024, NAN, 1)};
    const struct cs_tune_obs zero[] = {O(0, 0, 5, 1)};

    cs_error_init(&err);
    ck_assert_int_eq(cs_tune_ranges(dup, 2, &r, &nr, &err), CS_ERR_INVALID);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(cs_tune_ranges(none, 2, &r, &nr, &err), CS_ERR_INVALID);
    ck_assert_int_eq(cs_tune_ranges(neg, 1, &r, &nr, &err), CS_ERR_INVALID);
    ck_assert_int_eq(cs_tune_ranges(nan_t, 1, &r, &nr, &err), CS_ERR_INVALID);
    ck_assert_int_eq(cs_tune_ranges(zero, 1, &r, &nr, &err), CS_ERR_INVALID);
    ck_assert_int_eq(cs_tune_ranges(dup, 0, &r, &nr, &err), CS_ERR_INVALID);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(nr, -1);
}
END_TEST

/* A sweep table from CSV text. */
static struct cs_table *table(const char *csv)
{
    struct cs_table *t = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_table_parse(csv, strlen(csv), "s.csv", &t, &err) == 0, "%s", err.msg);
    return t;
}

/* The constructed sweep of tune.sh: three variants of two schedule files on one platform. */
START_TEST(read_sweep)
{
    struct cs_table *t = NULL;
    struct cs_tune_sweep sw;
    struct cs_error err;
    const char *where[] = {"protocol=LL128"};

    cs_error_init(&err);
    ck_assert_int_eq(cs_table_read(test_data("tune/sweep.csv"), &t, &err), 0);
    ck_assert_msg(cs_tune_read(t, "sweep.csv", NULL, 0, &sw, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(sw.naxes, 4);
    ck_assert_int_eq(sw.nvar, 3);
    ck_assert_str_eq(sw.var[0].desc, "allreduce_a100_ncv4.4gpu.1inst.LL LL");
    ck_assert_str_eq(sw.var[2].desc, "allreduce_a100_pcie_hierarchical_fixed.4gpu.1inst.LL Simple");
    ck_assert_str_eq(sw.platform, "platform.family=dgx-a100");
    ck_assert_int_eq(sw.nobs, 18);
    ck_assert_int_eq(sw.obs[4].ok, 0); /* the first deadlock */
    ck_assert_int_eq(sw.obs[6].variant, 1);
    ck_assert_int_eq(sw.obs[6].size_bytes, 1024);
    ck_assert(sw.obs[6].time_us == 9.0);
    ck_assert_int_eq(cs_tune_uneven(&sw), 0);
    cs_tune_cleanup(&sw);
    ck_assert_int_eq(cs_tune_read(t, "sweep.csv", where, 1, &sw, &err), 0);
    ck_assert_int_eq(sw.nvar, 1);
    ck_assert_int_eq(sw.nobs, 6);
    cs_tune_cleanup(&sw);
    cs_table_free(t);
}
END_TEST

START_TEST(read_refused)
{
    struct cs_table *t = table("point,gen.algorithm,protocol,platform.family,size_bytes,count,type,"
                               "time_us,algbw_GBps,busbw_GBps,status\n"
                               "0,ring,LL,a,1024,256,float,5,1,1,ok\n"
                               "1,ring,LL,b,1024,256,float,6,1,1,ok\n"
                               "2,ring,Simple,a,2048,512,float,x,1,1,ok\n");
    struct cs_table *nosweep = table("a,b\n1,2\n");
    struct cs_tune_sweep sw;
    struct cs_error err;
    const char *a[] = {"platform.family=a"}, *c[] = {"platform.family=c"};
    const char *nosuch[] = {"nosuch=1"}, *noeq[] = {"protocol"};

    cs_error_init(&err);
    ck_assert_int_eq(cs_tune_read(t, "s.csv", NULL, 0, &sw, &err), CS_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "more than one platform"));
    ck_assert_ptr_nonnull(strstr(err.msg, "--where platform.family=VALUE"));
    cs_error_init(&err);
    ck_assert_int_eq(cs_tune_read(t, "s.csv", a, 1, &sw, &err), CS_ERR_PARSE);
    ck_assert_int_eq(err.line, 4);
    ck_assert_str_eq(err.msg, "bad time_us 'x'");
    cs_error_init(&err);
    ck_assert_int_eq(cs_tune_read(t, "s.csv", c, 1, &sw, &err), CS_ERR_INVALID);
    ck_assert_str_eq(err.msg, "no rows match --where");
    cs_error_init(&err);
    ck_assert_int_eq(cs_tune_read(t, "s.csv", nosuch, 1, &sw, &err), CS_ERR_USAGE);
    ck_assert_str_eq(err.msg, "--where nosuch=1: s.csv has no axis column 'nosuch'");
    cs_error_init(&err);
    ck_assert_int_eq(cs_tune_read(t, "s.csv", noeq, 1, &sw, &err), CS_ERR_USAGE);
    cs_error_init(&err);
    ck_assert_int_eq(cs_tune_read(nosweep, "n.csv", NULL, 0, &sw, &err), CS_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(err.msg, "not a sweep CSV"));
    cs_table_free(nosweep);
    cs_table_free(t);
}
END_TEST

/* Uneven sizes: a variant measured where the other was not. */
START_TEST(uneven)
{
    struct cs_table *t = table("point,schedule,size_bytes,time_us,status\n"
                               "0,a.xml,1024,5,ok\n0,a.xml,2048,6,ok\n1,b.xml,1024,5,ok\n"
                               "1,b.xml,3072,6,ok\n");
    struct cs_tune_sweep sw;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_int_eq(cs_tune_read(t, "s.csv", NULL, 0, &sw, &err), 0);
    ck_assert_int_eq(sw.nvar, 2);
    ck_assert_str_eq(sw.var[1].desc, "b");
    ck_assert_str_eq(sw.platform, "");
    ck_assert_int_eq(cs_tune_uneven(&sw), 2);
    cs_tune_cleanup(&sw);
    cs_table_free(t);
}
END_TEST

/* A step "<step s=S type=T ... cnt=16>" of a two- or three-GPU custom schedule. */
#define STEP(s, t)                                                                                 \
    "<step s=\"" #s "\" type=\"" t "\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" "                    \
    "dstoff=\"0\" cnt=\"16\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>"
#define ALGO(n)                                                                                    \
    "<algo name=\"t\" proto=\"LL\" nchannels=\"1\" nchunksperloop=\"16\" ngpus=\"" #n              \
    "\" coll=\"custom\" inplace=\"1\">"
#define GPU(g) "<gpu id=\"" #g "\" i_chunks=\"16\" o_chunks=\"0\" s_chunks=\"0\">"
#define TB(id, send, recv) "<tb id=\"" #id "\" send=\"" #send "\" recv=\"" #recv "\" chan=\"0\">"

/* Each GPU sends 16 chunks to the other, then receives theirs: a cycle once 16 calls overfill. */
static const char mirrored[] = ALGO(2) GPU(0) TB(0, 1, 1) STEP(0, "s")
    STEP(1, "r") "</tb></gpu>" GPU(1) TB(0, 0, 0) STEP(0, "s") STEP(1, "r") "</tb></gpu></algo>";
/* GPU 0 sends, GPU 1 only receives: the receive drains it at every size. */
static const char one_way[] = ALGO(2) GPU(0) TB(0, 1, -1) STEP(0, "s") "</tb></gpu>" GPU(1)
    TB(0, -1, 0) STEP(0, "r") "</tb></gpu></algo>";
/* GPU 1 forwards what GPU 0 sends to GPU 2: it drains only as fast as GPU 2 takes. */
static const char forward[] = ALGO(3) GPU(0) TB(0, 1, -1) STEP(0, "s") "</tb></gpu>" GPU(1)
    TB(0, 2, 0) STEP(0, "rcs") "</tb></gpu>" GPU(2) TB(0, -1, 1) STEP(0, "r") "</tb></gpu></algo>";

static struct cs_tune_credit credit_of(struct cs_sched *s, enum cs_proto proto)
{
    struct cs_plan *p = NULL;
    struct cs_tune_credit c;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_plan_compile(s, proto, &p, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(cs_tune_credit_limit(p, &c), 0);
    cs_plan_free(p);
    cs_sched_free(s);
    return c;
}

static struct cs_tune_credit credit_xml(const char *xml, enum cs_proto proto)
{
    struct cs_sched *s = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_sched_read_xml_mem(xml, strlen(xml), "t.xml", &s, &err) == 0, "%s", err.msg);
    return credit_of(s, proto);
}

/* The closed form: a cnt=16 step with 16 chunks per loop overfills LL's 8 slots once
 * maxAllowedCount < 2, above 16 x 32 KiB / 2 = 256 KiB; Simple's 2 calls of 4 slots once it is
 * below 8, above 16 x 2 MiB / 8 = 4 MiB. */
START_TEST(credit_closed_form)
{
    struct cs_tune_credit c = credit_xml(mirrored, 0);

    ck_assert_int_eq(c.first_bytes, 262145);
    ck_assert_int_eq(c.limit_bytes, 262145);
    ck_assert_int_eq(c.deadlock, 1);
    ck_assert(c.gpu == 0 && c.tb == 0 && c.step == 0 && c.cnt == 16);
    c = credit_xml(mirrored, CS_PROTO_SIMPLE);
    ck_assert_int_eq(c.limit_bytes, 4194305);
    ck_assert_int_eq(c.deadlock, 1);
    c = credit_xml(one_way, 0);
    ck_assert_int_eq(c.first_bytes, 262145);
    ck_assert_int_eq(c.limit_bytes, 0); /* overfull, but drained */
    c = credit_xml(forward, 0);
    ck_assert_int_eq(c.limit_bytes, 262145);
    ck_assert_int_eq(c.deadlock, 0); /* may deadlock */
    ck_assert_int_eq(c.gpu, 0);
}
END_TEST

/* The runtime audit's worked example (runtime-audit.md 1.4, 2.4): hierarchical v1, 8 GPUs, LL
 * fits at 1 MiB and deadlocks from the next byte on; the split variant never does. */
START_TEST(credit_audit_example)
{
    struct cs_sched *s = NULL;
    struct cs_tune_credit c;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_gen_from_spec("hierarchical:gpus=8,protocol=LL,variant=v1", &s, &err) == 0,
                  "%s", err.msg);
    c = credit_of(s, 0);
    ck_assert_int_eq(c.limit_bytes, 1048577);
    ck_assert_int_eq(c.deadlock, 1);
    ck_assert_int_eq(c.cnt, 16);
    ck_assert_msg(cs_gen_from_spec("hierarchical:gpus=8,protocol=LL", &s, &err) == 0, "%s",
                  err.msg);
    c = credit_of(s, 0);
    ck_assert_int_eq(c.limit_bytes, 0);
    ck_assert_msg(cs_sched_read_xml(test_data("msccl-xml/allreduce_a100_pcie_hierarchical_fixed."
                                              "4gpu.1inst.LL.xml"),
                                    &s, &err) == 0,
                  "%s", err.msg);
    c = credit_of(s, CS_PROTO_SIMPLE); /* cnt=8 of 16 chunks: 8 MiB, as predict finds */
    ck_assert_int_eq(c.limit_bytes, 8388609);
    ck_assert_int_eq(c.deadlock, 1);
}
END_TEST

/* The shared DEADLOCK_SCAN.tsv (an untimed replay of the executor's flow control at 4 KiB x 4^k):
 * every schedule it saw deadlock has its credit limit after the last size that finished and at
 * or before the first that deadlocked; none it saw finish up to 4 GiB has a limit below that. */
START_TEST(credit_deadlock_scan)
{
    char path[4096 + 600], line[1024], file[512], proto[16], ok[32], dead[32];
    FILE *fp;
    int n = 0;

    snprintf(path, sizeof(path), "%s/msccl-xml/DEADLOCK_SCAN.tsv", test_shared_data());
    ck_assert_ptr_nonnull(fp = fopen(path, "r"));
    while (fgets(line, sizeof(line), fp) != NULL) {
        struct cs_sched *s = NULL;
        struct cs_tune_credit c;
        struct cs_error err;
        long long last_ok, first_dead = 0;

        if (line[0] == '#' || strncmp(line, "filename", 8) == 0 ||
            sscanf(line, "%511[^\t]\t%15[^\t]\t%31[^\t]\t%31[^\t\n]", file, proto, ok, dead) != 4)
            continue;
        last_ok = atoll(ok);
        if (strncmp(dead, "none", 4) != 0)
            first_dead = atoll(dead);
        snprintf(path, sizeof(path), "%s/msccl-xml/%s", test_shared_data(), file);
        cs_error_init(&err);
        ck_assert_msg(cs_sched_read_xml(path, &s, &err) == 0, "%s", err.msg);
        c = credit_of(s, 0);
        if (first_dead)
            ck_assert_msg(c.limit_bytes > last_ok && c.limit_bytes <= first_dead,
                          "%s: limit %lld, scan %lld..%lld", file, c.limit_bytes, last_ok,
                          first_dead);
        else
            ck_assert_msg(c.limit_bytes == 0 || c.limit_bytes > last_ok, "%s: limit %lld", file,
                          c.limit_bytes);
        n++;
    }
    fclose(fp);
    ck_assert_int_ge(n, 70);
}
END_TEST

/* Variants compete at the nominal size; windows stay off the variant's deadlocks and credit
 * limit. */
START_TEST(nominal_sizes)
{
    /* 2 variants at 8 nominal sizes: variant 1 rounds up, but is faster at every size */
    struct cs_table *t = table("point,schedule,size_bytes,nominal_bytes,time_us,status\n"
                               "0,a.xml,1024,1024,5,ok\n0,a.xml,4096,4096,9,ok\n"
                               "0,a.xml,16384,16384,20,ok\n"
                               "1,b.xml,1536,1024,4,ok\n1,b.xml,4608,4096,8,ok\n"
                               "1,b.xml,16896,16384,30,deadlock\n");
    struct cs_tune_sweep sw;
    struct cs_tune_range *r = NULL;
    struct cs_error err;
    long long lo, hi;
    int nr;

    cs_error_init(&err);
    ck_assert_int_eq(cs_tune_read(t, "s.csv", NULL, 0, &sw, &err), 0);
    ck_assert_int_eq(sw.naxes, 2);
    ck_assert_int_eq(sw.obs[3].nominal_bytes, 1024);
    ck_assert_int_eq(cs_tune_uneven(&sw), 0);
    ck_assert_int_eq(cs_tune_ranges(sw.obs, sw.nobs, &r, &nr, &err), 0);
    ck_assert_int_eq(nr, 2);
    ck_assert(r[0].variant == 1 && r[0].first_size == 1024 && r[0].last_size == 4096);
    ck_assert(r[1].variant == 0 && r[1].min_bytes == 16384);
    ck_assert_int_eq(cs_tune_window_safe(&sw, r, 0, nr, 1, &lo, &hi), 0);
    ck_assert(lo == 0 && hi == 16383);
    /* a credit limit inside the window cuts it, and the sizes above it stop competing */
    sw.var[1].credit.limit_bytes = 4000;
    ck_assert_int_eq(cs_tune_window_safe(&sw, r, 0, nr, 1, &lo, &hi), CS_TUNE_CAP_CREDIT);
    ck_assert(lo == 0 && hi == 3999);
    free(r);
    cs_tune_cleanup(&sw);
    ck_assert_int_eq(cs_tune_read(t, "s.csv", NULL, 0, &sw, &err), 0);
    /* a variant winning the last size but deadlocked above it: --extend stops short */
    sw.obs[5].ok = 1;
    sw.obs[5].time_us = 10;
    ck_assert_int_eq(cs_tune_ranges(sw.obs, sw.nobs, &r, &nr, &err), 0);
    ck_assert_int_eq(nr, 1);
    sw.obs[5] = (struct cs_tune_obs){.variant = 1, .size_bytes = 65536, .nominal_bytes = 65536};
    ck_assert_int_eq(cs_tune_window_safe(&sw, r, 0, nr, 1, &lo, &hi), CS_TUNE_CAP_SWEEP);
    ck_assert(lo == 0 && hi == 65535);
    free(r);
    cs_tune_cleanup(&sw);
    cs_table_free(t);
}
END_TEST

START_TEST(windows_and_names)
{
    const struct cs_tune_range r[] = {{1024, 4095, 0, 1024, 2048, 0, 0},
                                      {4096, 8192, 1, 4096, 8192, 0, 0}};
    long long lo, hi;
    char name[CS_TUNE_DESC_LEN];

    cs_tune_window(r, 0, 2, 0, &lo, &hi);
    ck_assert(lo == 1024 && hi == 4095);
    cs_tune_window(r, 1, 2, 0, &lo, &hi);
    ck_assert(lo == 4096 && hi == 8192);
    cs_tune_window(r, 0, 2, 1, &lo, &hi);
    ck_assert(lo == 0 && hi == 4095);
    cs_tune_window(r, 1, 2, 1, &lo, &hi);
    ck_assert(lo == 4096 && hi == 0);
    cs_tune_file_name("ring gpus=8 LL", 3, name, sizeof(name));
    ck_assert_str_eq(name, "03-ring-gpus8-LL.xml");
    cs_tune_file_name("a/b:c.x_y-z", 12, name, sizeof(name));
    ck_assert_str_eq(name, "12-a_b_c.x_y-z.xml");
}
END_TEST

/* A generator variant is generated with its protocol; written with its window, it reads back. */
START_TEST(generated_schedules)
{
    struct cs_table *t = table("point,gen.algorithm,gen.gpus,gen.compat,protocol,size_bytes,"
                               "time_us,status\n"
                               "0,ring,4,-,LL,1024,5,ok\n0,ring,4,-,LL,4096,9,ok\n"
                               "1,hierarchical,4,1,LL128,1024,6,ok\n"
                               "1,hierarchical,4,1,LL128,4096,7,ok\n");
    struct cs_tune_sweep sw;
    struct cs_tune_range *r = NULL;
    struct cs_sched *s = NULL;
    struct cs_error err;
    char dir[] = "/tmp/check_tune.XXXXXX", path[4096], *text;
    struct cs_tune_file files[2];
    size_t len;
    FILE *fp;
    int nr;

    cs_error_init(&err);
    ck_assert_int_eq(cs_tune_read(t, "s.csv", NULL, 0, &sw, &err), 0);
    ck_assert_str_eq(sw.var[1].desc, "hierarchical gpus=4 compat=1 LL128");
    ck_assert_msg(cs_tune_variant_sched(&sw, 1, ".", &s, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(s->proto, CS_PROTO_LL128);
    ck_assert_int_eq(s->ngpus, 4);
    cs_sched_free(s);
    ck_assert_int_eq(cs_tune_ranges(sw.obs, sw.nobs, &r, &nr, &err), 0);
    ck_assert_int_eq(nr, 2);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_msg(cs_tune_check_credits(&sw, ".", 1, &err) == 0, "%s", err.msg);
    ck_assert_msg(
        cs_tune_write_schedules(&sw, r, nr, 1, CS_VERIFY_EXECUTOR, ".", dir, files, &err) == 0,
        "%s", err.msg);
    ck_assert_str_eq(files[0].name, "00-ring-gpus4-LL.xml");
    snprintf(path, sizeof(path), "%s/%s", dir, files[1].name);
    ck_assert_msg(cs_sched_read_xml(path, &s, &err) == 0, "%s", err.msg);
    ck_assert(s->has_min_bytes && s->min_bytes == 4096 && s->has_max_bytes && s->max_bytes == 0);
    ck_assert(s->has_outofplace);
    ck_assert_int_eq(s->proto, CS_PROTO_LL128);
    cs_sched_free(s);
    unlink(path);
    snprintf(path, sizeof(path), "%s/%s", dir, files[0].name);
    unlink(path);
    ck_assert_int_eq(rmdir(dir), 0);
    fp = open_memstream(&text, &len);
    cs_tune_plan_write(fp, "s.csv", &sw, r, nr, files, 0, CS_VERIFY_EXECUTOR);
    fclose(fp);
    ck_assert_ptr_nonnull(
        strstr(text, "# collsim tune s.csv: the fastest variant per size range\n"));
    ck_assert_ptr_nonnull(strstr(text, "        1024         4095  1024..1024                 "
                                       "ring gpus=4 LL"));
    ck_assert_ptr_nonnull(strstr(text, "00-ring-gpus4-LL.xml\n"));
    free(text);
    free(r);
    cs_tune_cleanup(&sw);
    cs_table_free(t);
}
END_TEST

/* An LL128 variant competes where every path is NVLink (dgx-a100) and on no size where its
 * connections cross PCIe (a100-pcie-4gpu): its observations leave the competition with a note. */
START_TEST(ll128_off_nvlink)
{
    static const char *const fams[] = {"dgx-a100", "a100-pcie-4gpu"};

    for (int f = 0; f < 2; f++) {
        char csv[1024];
        struct cs_table *t;
        struct cs_tune_sweep sw;
        struct cs_error err;

        snprintf(csv, sizeof(csv),
                 "point,gen.algorithm,gen.gpus,protocol,platform.family,size_bytes,time_us,"
                 "status\n0,ring,4,LL,%s,1024,5,ok\n0,ring,4,LL,%s,4096,9,ok\n"
                 "1,ring,4,LL128,%s,1024,6,ok\n1,ring,4,LL128,%s,4096,7,ok\n",
                 fams[f], fams[f], fams[f], fams[f]);
        t = table(csv);
        cs_error_init(&err);
        ck_assert_int_eq(cs_tune_read(t, "s.csv", NULL, 0, &sw, &err), 0);
        ck_assert_msg(cs_tune_check_credits(&sw, ".", 1, &err) == 0, "%s", err.msg);
        ck_assert_msg(cs_tune_check_ll128(&sw, ".", &err) == 0, "%s", err.msg);
        ck_assert_str_eq(sw.var[1].desc, "ring gpus=4 LL128");
        ck_assert_int_eq(sw.var[0].off_nvlink[0], '\0');
        ck_assert_int_eq(sw.var[1].off_nvlink[0] != '\0', f == 1);
        for (long i = 0; i < sw.nobs; i++) {
            ck_assert_int_eq(sw.obs[i].ok, !(f == 1 && sw.obs[i].variant == 1));
            ck_assert_int_eq(sw.obs[i].off_nvlink, f == 1 && sw.obs[i].variant == 1);
        }
        if (f == 1)
            ck_assert_ptr_nonnull(strstr(sw.var[1].off_nvlink, "(pcie)"));
        cs_tune_cleanup(&sw);
        cs_table_free(t);
    }
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {known_fastest, 1},
        {gaps_and_ties, 1},
        {same_winner_twice, 1},
        {bad, 1},
        {read_sweep, 1},
        {read_refused, 1},
        {uneven, 1},
        {windows_and_names, 1},
        {generated_schedules, 1},
        {credit_closed_form, 1},
        {credit_audit_example, 1},
        {nominal_sizes, 1},
        {ll128_off_nvlink, 1},
        {NULL, 0},
    };

    const struct test_case shared[] = {{credit_deadlock_scan, 1}, {NULL, 0}};

    return test_run("tune", 120, tests, shared); /* the credit scan plans every shared XML */
}
