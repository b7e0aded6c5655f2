/* check_plot.c: gnuplot scripts from small tables: variants, legends, sizes that did not finish
 * marked, the fastest-variant map, titles, metadata, terminals and the errors on bad input. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plot.h"
#include "runner.h"

/* A sweep of two protocols at two sizes; LL deadlocks at 4096. */
static const char sweep[] = "point,protocol,gen.gpus,size_bytes,count,type,time_us,algbw_GBps,"
                            "busbw_GBps,status\n"
                            "0,LL,8,1024,256,float,5,0.2,0.3,ok\n"
                            "0,LL,8,4096,1024,float,-,-,-,deadlock\n"
                            "1,Simple,8,1024,256,float,9,0.1,0.2,ok\n"
                            "1,Simple,8,4096,1024,float,11,0.4,0.7,ok\n";

static struct cs_table *table(const char *text, const char *name)
{
    struct cs_table *t = NULL;
    struct cs_error err;

    cs_error_init(&err);
    ck_assert_msg(cs_table_parse(text, strlen(text), name, &t, &err) == 0, "%s", err.msg);
    return t;
}

/* Plot the tables (names n0, n1, ...) and return the script (free it), or NULL with err set. */
static char *script_of(const char *const *texts, int ntabs, const struct cs_plot_opts *o,
                       struct cs_error *err)
{
    static const char *const names[] = {"dir/a.csv", "dir/b.csv", "dir/c.csv"};
    struct cs_table *tabs[3];
    struct cs_plot *p = NULL;
    char *buf = NULL;
    size_t len = 0;
    int rc;

    cs_error_init(err);
    for (int i = 0; i < ntabs; i++)
        tabs[i] = table(texts[i], names[i]);
    rc = cs_plot_new((const struct cs_table *const *)tabs, names, ntabs, o, &p, err);
    for (int i = 0; i < ntabs; i++)
        cs_table_free(tabs[i]);
    if (rc != 0) {
        ck_assert_ptr_null(p);
        return NULL;
    }
    {
        FILE *fp = open_memstream(&buf, &len);

        ck_assert_int_eq(cs_plot_write(p, fp), 0);
        fclose(fp);
    }
    cs_plot_free(p);
    return buf;
}

static void has(const char *s, const char *what)
{
    ck_assert_msg(strstr(s, what) != NULL, "script lacks '%s':\n%s", what, s);
}

START_TEST(lines)
{
    const char *texts[] = {sweep};
    struct cs_plot_opts o = {.out = "x.svg", .title = "it's"};
    struct cs_error err;
    char *s = script_of(texts, 1, &o, &err);

    ck_assert_ptr_nonnull(s);
    /* protocol varies, gen.gpus does not: two variants named by the protocol alone */
    has(s, "$d0 << EOD\n1024 5 0.3\nEOD\n$f0 << EOD\n4096 2\nEOD\n");
    has(s, "$d1 << EOD\n1024 9 0.2\n4096 11 0.7\nEOD\n");
    ck_assert_ptr_null(strstr(s, "$f1"));
    /* three legend entries in one row below the panels: 700 + 19 + 16 pixels */
    has(s, "set terminal svg size 2200,735");
    has(s, "set output 'x.svg'\n");
    has(s, "set multiplot layout 1,2 title 'it''s'\n");
    has(s, "set logscale x 2\n");
    has(s, "set ylabel 'Time (us)'\n");
    has(s, "set ylabel 'Bus bandwidth (GB/s)'\n");
    /* LL's deadlock at 4096: above the longest time (11 us), and at 0 GB/s on the linear axis */
    has(s, "plot $d0 using 1:2 with linespoints lc 1 dt 1 pt 1 title 'LL', \\\n"
           "     $f0 using 1:(22):2 with points lc 1 pt variable ps 1.6 notitle, \\\n"
           "     $d1 using 1:2 with linespoints lc 2 dt 1 pt 2 title 'Simple', \\\n"
           "     NaN with points lc rgb 'black' pt 2 ps 1.6 title 'deadlock (no time, 0 GB/s)'\n");
    has(s, "unset logscale y\nset yrange [0:*]\n");
    has(s, "$f0 using 1:(0):2 with points");
    has(s, "set label 'not finished' at graph 0.01, first 22 ");
    has(s, "unset key\n");
    has(s, "set key at screen 0.5, screen 0 center bottom vertical maxrows 1 ");
    has(s, "using 1:3");
    ck_assert_ptr_null(strstr(s, "gpus="));
    free(s);

    o = (struct cs_plot_opts){.out = "x.png", .metric = "time"};
    s = script_of(texts, 1, &o, &err);
    has(s, "if (strstrt(GPVAL_TERMINALS.' ', ' pngcairo ') == 0) {\n");
    has(s, "set terminal pngcairo size 1400,735");
    has(s, "set multiplot layout 1,1 title 'a.csv'\n");
    ck_assert_ptr_null(strstr(s, "Bus bandwidth"));
    free(s);

    /* bus bandwidth alone on a log axis: the deadlock below the least bandwidth (0.2 GB/s) */
    o = (struct cs_plot_opts){.out = "x.pdf", .metric = "busbw", .busbw_log = 1};
    s = script_of(texts, 1, &o, &err);
    has(s, "exit status 3\n}\nset terminal pdfcairo size 14.00in,7.35in");
    has(s, "set logscale y 10\n");
    has(s, "$f0 using 1:(0.1):2 with points");
    ck_assert_ptr_null(strstr(s, "unset logscale y"));
    ck_assert_ptr_null(strstr(s, "not finished"));
    free(s);
}
END_TEST

START_TEST(where_and_files)
{
    const char *pred = "size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status\n"
                       "1024,256,float,5,0.2,0.3,ok\n";
    const char *two[] = {pred, pred}, *one[] = {sweep};
    const char *where[] = {"protocol=Simple"};
    struct cs_plot_opts o = {.out = "x.png"};
    struct cs_error err;
    char *s = script_of(two, 2, &o, &err);

    /* plain prediction tables: one line each, named by the file */
    has(s, "title 'a.csv', \\\n     $d1 using 1:2 with linespoints lc 2 dt 1 pt 2 title 'b.csv'");
    has(s, "title 'a.csv, b.csv'\n");
    free(s);

    o.where = where;
    o.nwhere = 1;
    s = script_of(one, 1, &o, &err);
    has(s, "$d0 << EOD\n1024 9 0.2\n4096 11 0.7\nEOD\n");
    ck_assert_ptr_null(strstr(s, "$d1"));
    free(s);
}
END_TEST

START_TEST(best)
{
    /* 10 sorts after 2; at 4096 and 2 GPUs nothing finishes */
    const char *text = "point,protocol,gen.gpus,size_bytes,count,type,time_us,algbw_GBps,"
                       "busbw_GBps,status\n"
                       "0,LL,10,1024,256,float,5,0.2,0.3,ok\n"
                       "1,Simple,10,1024,256,float,4,0.2,0.3,ok\n"
                       "2,LL,2,1024,256,float,3,0.2,0.3,ok\n"
                       "3,Simple,2,1024,256,float,6,0.2,0.3,ok\n"
                       "2,LL,2,4096,256,float,-,-,-,deadlock\n"
                       "3,Simple,2,4096,256,float,-,-,-,deadlock\n";
    const char *texts[] = {text};
    struct cs_plot_opts o = {.out = "m.png", .best = "gen.gpus"};
    struct cs_error err;
    char *s = script_of(texts, 1, &o, &err);

    ck_assert_ptr_nonnull(s);
    has(s, "$b0 << EOD\n1024 0\nEOD\n$b1 << EOD\n1024 1\nEOD\n$b512 << EOD\n4096 0\nEOD\n");
    /* three legend entries in one row below: 300 + 60 x 2 + 19 + 16 pixels */
    has(s, "set terminal pngcairo size 1500,455");
    has(s, "set title 'Fastest variant per size and gen.gpus: a.csv'\n");
    has(s, "set ylabel 'gen.gpus'\n");
    has(s, "set ytics ('2' 0, '10' 1)\n");
    has(s, "plot $b0 using 1:2 with points lc 1 pt 5 ps 3.5 title 'LL', \\\n"
           "     $b1 using 1:2 with points lc 2 pt 5 ps 3.5 title 'Simple', \\\n"
           "     $b512 using 1:2 with points lc rgb 'black' pt 2 ps 2.5 title 'none finishes "
           "(deadlock, hang or unsupported)'\n");
    has(s, "set key outside below center vertical maxrows 1 ");
    free(s);
}
END_TEST

/* Read text through cs_plot_read, from a temporary file. */
static struct cs_table *read_text(const char *text)
{
    char path[] = "/tmp/check_plot.XXXXXX";
    int fd = mkstemp(path);
    struct cs_table *t = NULL;
    struct cs_error err;

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (long)strlen(text));
    close(fd);
    cs_error_init(&err);
    ck_assert_msg(cs_plot_read(path, &t, &err) == 0, "%s", err.msg);
    unlink(path);
    return t;
}

/* The script of tables already read, named a.csv, b.csv. */
static char *script_of_tabs(struct cs_table **tabs, int ntabs, const struct cs_plot_opts *o)
{
    static const char *const names[] = {"dir/a.csv", "dir/b.csv"};
    struct cs_plot *p = NULL;
    struct cs_error err;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp;

    cs_error_init(&err);
    ck_assert_msg(cs_plot_new((const struct cs_table *const *)tabs, names, ntabs, o, &p, &err) == 0,
                  "%s", err.msg);
    fp = open_memstream(&buf, &len);
    ck_assert_int_eq(cs_plot_write(p, fp), 0);
    fclose(fp);
    cs_plot_free(p);
    for (int i = 0; i < ntabs; i++)
        cs_table_free(tabs[i]);
    return buf;
}

START_TEST(titles_and_metadata)
{
    /* a sweep whose schedule and platform hold one value: the title says them, not the file */
    const char *sw = "point,schedule,protocol,platform,size_bytes,count,type,time_us,algbw_GBps,"
                     "busbw_GBps,status\n"
                     "0,../s/ring.xml,LL,p/dgx.xml,1024,256,float,5,0.2,0.3,ok\n"
                     "1,../s/ring.xml,Simple,p/dgx.xml,1024,256,float,6,0.2,0.3,ok\n";
    const char *m1 = "# schedule: schedules/ring.xml\n# platform: platforms/ndv4.xml\n"
                     "# gpus: 8\n# version: 1.0\n"
                     "size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status"
                     ",nominal_bytes\n"
                     "1000,250,float,5,0.2,0.3,ok,1000\n"
                     "# a note between rows\n"
                     "2000,500,float,-,-,-,hang,2000\n";
    const char *m2 =
        "# collsim predict: schedules/tree.xml on platforms/ndv4.xml, LL, 8 GPUs, float\n"
        "size_bytes,count,type,time_us,algbw_GBps,busbw_GBps,status\n"
        "1000,250,float,4,0.2,0.4,ok\n";
    const char *texts[] = {sw};
    struct cs_plot_opts o = {.out = "x.png"};
    struct cs_error err;
    struct cs_table *tabs[2];
    char *s = script_of(texts, 1, &o, &err);

    has(s, "title 'ring.xml on dgx.xml'\n");
    free(s);

    /* metadata lines: columns of one value; nominal_bytes is no variant; hang marked as such */
    tabs[0] = read_text(m1);
    ck_assert_int_ge(cs_table_find_col(tabs[0], "schedule"), 0);
    ck_assert_str_eq(cs_table_get(tabs[0], 1, cs_table_find_col(tabs[0], "gpus")), "8");
    ck_assert_int_eq(tabs[0]->lines[1], 8);
    ck_assert_int_lt(cs_table_find_col(tabs[0], "version"), 0);
    s = script_of_tabs(tabs, 1, &o);
    has(s, "title 'ring.xml on ndv4.xml, gpus=8'\n");
    has(s, "$d0 << EOD\n1000 5 0.3\nEOD\n$f0 << EOD\n2000 6\nEOD\n");
    has(s, "title 'hang'");
    free(s);

    /* two predictions on one platform: the schedules name the lines, the platform the figure */
    tabs[0] = read_text(m1);
    tabs[1] = read_text(m2);
    s = script_of_tabs(tabs, 2, &o);
    has(s, "title 'ndv4.xml, gpus=8'\n");
    has(s, "title 'ring.xml'");
    has(s, "title 'tree.xml LL'");
    free(s);

    /* the same metadata twice: the file names tell the lines apart */
    tabs[0] = read_text(m2);
    tabs[1] = read_text(m2);
    s = script_of_tabs(tabs, 2, &o);
    has(s, "title 'a.csv'");
    has(s, "title 'b.csv'");
    free(s);
}
END_TEST

static void bad(const char *text, const struct cs_plot_opts *o, int line, const char *what)
{
    const char *texts[] = {text};
    struct cs_error err;
    char *s = script_of(texts, 1, o, &err);

    ck_assert_ptr_null(s);
    ck_assert_msg(err.line == line, "line %d, want %d (%s)", err.line, line, err.msg);
    ck_assert_msg(strstr(err.msg, what) != NULL, "'%s' lacks '%s'", err.msg, what);
}

START_TEST(errors)
{
    const char *head = "protocol,size_bytes,time_us,busbw_GBps,status\n";
    const char *w1[] = {"protocol=XX"}, *w2[] = {"nosuch=1"};
    struct cs_plot_opts o = {.out = "x.png"};
    char text[512];

    bad("a,b\n1,2\n", &o, 0, "not a prediction or sweep CSV");
    snprintf(text, sizeof(text), "%sLL,1K,5,0.3,ok\n", head);
    bad(text, &o, 2, "bad size_bytes");
    snprintf(text, sizeof(text), "%sLL,1024,5,0.3,ok\nLL,2048,0,0.3,ok\n", head);
    bad(text, &o, 3, "status ok but time or busbw is not a positive number");
    snprintf(text, sizeof(text), "%sLL,1024,5,0.3x,ok\n", head);
    bad(text, &o, 2, "not a positive number");
    snprintf(text, sizeof(text), "%sLL,1024,5,0.3,ok\n", head);
    o.best = "nosuch";
    bad(text, &o, 0, "--best nosuch: no such axis column");
    o.best = NULL;
    o.where = w1;
    o.nwhere = 1;
    bad(text, &o, 0, "nothing to plot (check --where)");
    o.where = w2;
    bad(text, &o, 0, "--where nosuch=1: no such axis column");
    o.nwhere = 0;
    snprintf(text, sizeof(text), "%sLL,1024,5,0.3,ok\nLL,2048,-,-,stuck\n", head);
    bad(text, &o, 3, "unknown status 'stuck'");
    /* a map over the protocol of rows with 4 and 8 GPUs compares different collectives */
    o.best = "protocol";
    bad("protocol,gen.gpus,size_bytes,time_us,busbw_GBps,status\n"
        "LL,4,1024,5,0.3,ok\nLL,-,1024,5,0.3,ok\nSimple,8,1024,4,0.3,ok\nLL,4,2048,5,0.3,ok\n",
        &o, 0,
        "--best protocol: the rows mix GPU counts (gen.gpus: 4, 8); choose one with --where");
}
END_TEST

int main(void)
{
    const struct test_case tests[] = {
        {lines, 1}, {where_and_files, 1}, {best, 1}, {titles_and_metadata, 1}, {errors, 1},
        {NULL, 0},
    };

    return test_run("plot", 0, tests, NULL);
}
