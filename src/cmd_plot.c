/* cmd_plot.c: `collsim plot`: gnuplot figures of prediction and sweep CSVs: time and bus
 * bandwidth against size per variant, and a map of the fastest variant per (size, parameter). */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "fdio.h"
#include "plot.h"
#include "spawn.h"
#include "table.h"

const char cmd_plot_usage[] =
    "usage: collsim plot CSV... [-o OUT.png|OUT.svg|OUT.pdf] [--metric time|busbw|both]\n"
    "                    [--busbw-scale linear|log] [--best COLUMN] [--where KEY=VALUE]...\n"
    "                    [--title T] [--script FILE]\n"
    "\n"
    "Draw prediction CSVs ('collsim predict --format csv') or sweep CSVs ('collsim sweep') with\n"
    "gnuplot. One line per variant: the axis columns that vary name it (several plain\n"
    "prediction CSVs: their file names). Sizes that deadlock, hang or are unsupported are marked\n"
    "above the times and at zero bus bandwidth. The title says the schedule and platform the\n"
    "rows share (sweep columns, or '# schedule: S' and '# platform: P' lines atop a CSV).\n"
    "  -o OUT          PNG, SVG or PDF, by extension (default: the first CSV's name, .png)\n"
    "  --metric M      time and bus bandwidth against size, side by side (both, the default),\n"
    "                  or one of them; size and time on log axes\n"
    "  --busbw-scale S bus bandwidth on a linear axis from 0 (the default: how close to the\n"
    "                  link's rate a size comes) or a log one\n"
    "  --best COLUMN   instead, a map: for each size (x) and value of COLUMN (y), the variant\n"
    "                  (the other varying columns) with the least time; cells where every\n"
    "                  variant fails are marked. Rows of different GPU counts are refused\n"
    "                  (choose one with --where) unless COLUMN is the count\n"
    "  --where K=V     plot only rows whose column K is V (repeatable)\n"
    "  --title T       the figure's title\n"
    "  --script FILE   write the gnuplot script (data inline) there instead of running gnuplot\n"
    "gnuplot is found in PATH, or named by $GNUPLOT; PNG and PDF need its cairo terminals.\n";

#define MAX_FILES 64
#define MAX_WHERE 32

/* Parse the options into o and *script; the CSVs start at optind. */
static int parse_args(int argc, char **argv, struct cs_plot_opts *o, const char **where,
                      const char **script)
{
    int c, started = 0;
    struct cmd_opts t;

    cmd_opts_init(&t, "best=B: busbw-scale=Y: metric=M: script=S: title=T: where=W:");
    while ((c = cmd_getopt(argc, argv, "o:", t.opt, &started)) != -1) {
        if (c == 'M' && strcmp(optarg, "time") && strcmp(optarg, "busbw") && strcmp(optarg, "both"))
            return cmd_usage_error("plot: --metric takes time, busbw or both");
        if (c == 'Y' && strcmp(optarg, "linear") && strcmp(optarg, "log"))
            return cmd_usage_error("plot: --busbw-scale takes linear or log");
        if (c == 'W' && (o->nwhere == MAX_WHERE || strchr(optarg, '=') == NULL))
            return cmd_usage_error("plot: --where takes KEY=VALUE (at most %d)", MAX_WHERE);
        if (c == 'o') {
            const char *dot = strrchr(optarg, '.');
            struct stat st;

            /* a device or FIFO (as /dev/null) takes PNG, as the help says of no extension */
            if ((dot == NULL || strchr(dot, '/') != NULL ||
                 (strcmp(dot, ".png") != 0 && strcmp(dot, ".svg") != 0 &&
                  strcmp(dot, ".pdf") != 0)) &&
                !(stat(optarg, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)))
                return cmd_usage_error("plot: -o %s: the image's extension says its format: .png, "
                                       ".svg or .pdf",
                                       optarg);
            o->out = optarg;
        } else if (c == 'B')
            o->best = optarg;
        else if (c == 'M')
            o->metric = optarg;
        else if (c == 'S')
            *script = optarg;
        else if (c == 'T')
            o->title = optarg;
        else if (c == 'W')
            where[o->nwhere++] = optarg;
        else if (c == 'Y')
            o->busbw_log = strcmp(optarg, "log") == 0;
        else
            return CS_EXIT_USAGE;
    }
    if (optind == argc)
        return cmd_usage_error("plot: no CSV; see 'collsim help plot'");
    /* gnuplot gets the image's path in its script: no byte there may end the command */
    for (const char *q = o->out; q != NULL && *q; q++)
        if ((unsigned char)*q < 0x20 || *q == 0x7f)
            return cmd_usage_error("plot: -o: a path with a control character (newline, tab, "
                                   "...) is refused");
    if (argc - optind > MAX_FILES)
        return cmd_usage_error("plot: at most %d CSV files", MAX_FILES);
    return 0;
}

/* The first CSV's base name without its extension, "-best" for the map, then .png. */
static const char *default_out(const char *csv, int best, char *buf, size_t len)
{
    const char *b = strrchr(csv, '/') ? strrchr(csv, '/') + 1 : csv;
    const char *dot = strrchr(b, '.');

    snprintf(buf, len, "%.*s%s.png", (int)(dot && dot != b ? dot - b : (long)strlen(b)), b,
             best ? "-best" : "");
    return buf;
}

/* Write the plot's script to path (replaced only when complete), or to a new temporary file
 * named in tmp when path is NULL (removed if a signal kills collsim). */
static int write_script(const struct cs_plot *p, const char *path, char *tmp)
{
    struct cs_outfile out;
    struct cs_error err;
    FILE *fp;
    int rc, fd;

    cs_error_init(&err);
    if (path != NULL) {
        if (cs_outfile_open(&out, path, &err) != 0) {
            cmd_print_error(&err);
            return CS_EXIT_USAGE;
        }
        rc = cs_plot_write(p, out.fp);
        if (cs_outfile_close(&out, &err) != 0 || rc != 0) {
            cmd_print_error(&err);
            return CS_EXIT_USAGE;
        }
        return CS_EXIT_OK;
    }
    if ((fd = cs_cleanup_mkstemps(tmp, 0)) < 0 || (fp = fdopen(fd, "w")) == NULL) {
        fprintf(stderr, "collsim: %s: %s\n", tmp, strerror(errno));
        if (fd >= 0)
            close(fd);
        return CS_EXIT_USAGE;
    }
    rc = cs_plot_write(p, fp);
    if (fclose(fp) != 0 || rc != 0) {
        fprintf(stderr, "collsim: cannot write the gnuplot script\n");
        return CS_EXIT_USAGE;
    }
    return CS_EXIT_OK;
}

/* Run gnuplot ($GNUPLOT, else from PATH) on the script, which is removed when it succeeds. */
/* Whether the image gnuplot wrote at path is whole, by the format of name's extension: a PNG
 * ends with its IEND chunk, a PDF with %%EOF, an SVG with </svg> (a full disk leaves an empty or
 * cut file while gnuplot still exits 0). */
static int image_complete(const char *path, const char *name)
{
    const char *dot = strrchr(name, '.');
    const char *end = dot && strcmp(dot, ".pdf") == 0   ? "%%EOF"
                      : dot && strcmp(dot, ".svg") == 0 ? "</svg>"
                                                        : "IEND";
    char tail[64];
    size_t n;
    FILE *fp = cs_fopen_read(path);

    if (fp == NULL)
        return 0;
    if (fseek(fp, -(long)sizeof(tail), SEEK_END) != 0)
        rewind(fp);
    n = fread(tail, 1, sizeof(tail), fp);
    fclose(fp);
    return n > 0 && memmem(tail, n, end, strlen(end)) != NULL;
}

static int run_gnuplot(const char *script, const char *out)
{
    const char *gp = getenv("GNUPLOT");
    pid_t pid;

    if (gp == NULL || *gp == '\0')
        gp = "gnuplot";
    fflush(NULL);
    if ((pid = fork()) == 0) {
        execlp(gp, gp, script, (char *)NULL);
        fprintf(stderr,
                "collsim: cannot run %s: %s (install gnuplot, e.g. Debian "
                "gnuplot-nox, or set GNUPLOT)\n",
                gp, strerror(errno));
        _exit(127);
    }
    if (pid < 0 || cs_spawn_wait(pid) != 0) {
        fprintf(stderr, "collsim: gnuplot failed on %s\n", script);
        return CS_EXIT_USAGE; /* the script is kept to look at */
    }
    unlink(script);
    if (access(out, F_OK) != 0) {
        fprintf(stderr, "collsim: gnuplot wrote no %s\n", out);
        return CS_EXIT_USAGE;
    }
    return CS_EXIT_OK;
}

/* gnuplot's image at out, checked whole against the name it is for (the target's extension). */
static int check_image(const char *out, const char *name)
{
    if (!image_complete(out, name)) {
        fprintf(stderr, "collsim: gnuplot's %s is empty or cut (a full disk?): not written\n",
                name);
        return CS_EXIT_USAGE;
    }
    return CS_EXIT_OK;
}

/* Draw p into image (opened for o->out): gnuplot writes where the output helper says (a temporary
 * file beside o->out, or a device in place), and the image replaces o->out only once gnuplot has
 * succeeded. An exit code; image is closed or discarded. */
static int draw(const struct cs_plot *p, const struct cs_plot_opts *o, struct cs_outfile *image)
{
    char tmp[] = "/tmp/collsim-plot.XXXXXX";
    struct cs_error err;
    int rc = write_script(p, NULL, tmp);

    cs_error_init(&err);
    if (rc == CS_EXIT_OK)
        rc = run_gnuplot(tmp, image->tmp ? image->tmp : o->out);
    if (rc == CS_EXIT_OK && image->tmp != NULL) /* a device or FIFO is written in place */
        rc = check_image(image->tmp, o->out);
    cs_cleanup_drop(tmp);
    if (rc != CS_EXIT_OK) {
        cs_outfile_discard(image);
        return rc;
    }
    if (cs_outfile_close(image, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    fprintf(stderr, "collsim: wrote %s\n", o->out);
    return CS_EXIT_OK;
}

int cmd_plot(int argc, char **argv)
{
    struct cs_plot_opts o = {.metric = "both"};
    const char *where[MAX_WHERE], *script = NULL, *const * files;
    struct cs_table *tabs[MAX_FILES] = {0};
    struct cs_plot *p = NULL;
    struct cs_error err;
    char tmp[] = "/tmp/collsim-plot.XXXXXX", outbuf[1024];
    struct cs_outfile image;
    int nfiles = 0, opened = 0, rc = parse_args(argc, argv, &o, where, &script);

    if (rc != 0)
        return rc;
    files = (const char *const *)argv + optind;
    o.where = where;
    if (o.out == NULL)
        o.out = default_out(files[0], o.best != NULL, outbuf, sizeof(outbuf));
    cs_error_init(&err);
    for (; nfiles < argc - optind; nfiles++)
        if (cs_plot_read(files[nfiles], &tabs[nfiles], &err) != 0)
            break;
    if (nfiles == argc - optind && script == NULL &&
        (opened = cs_outfile_open(&image, o.out, &err) == 0))
        o.write_to = image.tmp;
    if (nfiles < argc - optind || (script == NULL && !opened) ||
        cs_plot_new((const struct cs_table *const *)tabs, files, nfiles, &o, &p, &err) != 0) {
        cmd_print_error(&err);
        rc = CS_EXIT_USAGE;
        if (opened)
            cs_outfile_discard(&image);
    } else {
        rc = script != NULL ? write_script(p, script, tmp) : draw(p, &o, &image);
    }
    cs_plot_free(p);
    for (int f = 0; f < nfiles; f++)
        cs_table_free(tabs[f]);
    return rc;
}
