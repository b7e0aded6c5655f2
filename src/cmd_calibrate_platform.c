/* cmd_calibrate_platform.c: `collsim calibrate platform`: a family's platform fitted to measured
 * tables through the model (refit.h), its report and outputs. The usage text is in
 * cmd_calibrate.h. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib.h"
#include "cases.h"
#include "cmd.h"
#include "cmd_calibrate.h"
#include "csv.h"
#include "fdio.h"
#include "meas.h"
#include "nccl.h"
#include "ncclinfo.h"
#include "params.h"
#include "parse.h"
#include "platform.h"
#include "refit.h"

#define MAX_TABLES 32
#define MAX_NAMED 32

struct popts {
    enum cs_platform_family fam;
    const char *fam_name;
    int nodes, sockets, nic_socket;
    enum cs_gpu_kind gpu;
    enum cs_platform_nic nic;
    const char *cases, *sched, *gen, *protocols;
    char nccl[16];
    int channels;
    enum cs_meas_coll coll;
    int ranks;
    struct cs_params base;
    struct cs_param_notes notes;
    char given[CS_MAX_PARAM_NOTES][64]; /* keys of --params and --set, in order */
    int ngiven;
    char fit[MAX_NAMED][64], fix[MAX_NAMED][64];
    int nfit, nfix;
    int max_iter, quiet, jobs;
    const char *out, *props, *report, *validate;
    const char *held[16];
    int nheld;
    const char **files;
    int nfiles;
};

static const char platform_opts[] =
    "family=f: nodes=N: gpu=u: nic=k: nic-socket=K: sockets=s: cases=C: schedule=x: gen=G: "
    "protocols=p: nccl=v: channels=H: collective=c: ranks=n: params=P: set=S: fit=F: fix=X: "
    "held-out=h: max-iter=i: props=q: report=r: quiet=Q jobs=j: validate=V:";

/* Remember key as given (--params, --set) for the props file. */
static void note_given(struct popts *o, const char *key)
{
    for (int i = 0; i < o->ngiven; i++)
        if (strcmp(o->given[i], key) == 0)
            return;
    if (o->ngiven < CS_MAX_PARAM_NOTES)
        snprintf(o->given[o->ngiven++], sizeof(o->given[0]), "%s", key);
}

/* --params FILE (c 'P') or --set KEY=VALUE into o->base, noted. */
static int take_param(struct popts *o, int c, const char *v)
{
    struct cs_error err;
    char key[256];
    const char *eq;

    cs_error_init(&err);
    if (c == 'P') {
        int before = o->notes.n;

        if (cs_params_read_props(&o->base, v, &o->notes, &err) != 0) {
            cmd_print_error(&err);
            return CS_EXIT_USAGE;
        }
        for (int i = before; i < o->notes.n; i++)
            note_given(o, o->notes.key[i]);
        return 0;
    }
    if ((eq = strchr(v, '=')) == NULL)
        return cmd_usage_error("--set: '%s' is not KEY=VALUE", v);
    snprintf(key, sizeof(key), "%.*s", (int)(eq - v), v);
    if (cs_params_set(&o->base, key, eq + 1, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    note_given(o, key);
    return cs_param_notes_put(&o->notes, key,
                              "set on the command line of collsim calibrate platform") == 0
               ? 0
               : cmd_usage_error("--set: too many parameters");
}

/* --fit KEY or --fix KEY into list (n entries). */
static int take_key(const char *opt, const char *v, char (*list)[64], int *n)
{
    struct cs_params scratch;
    double x;

    cs_params_init(&scratch);
    if (strchr(v, '=') != NULL)
        return cmd_usage_error("%s takes a parameter's key, not '%s' (the fit chooses the sizes "
                               "each key decides)",
                               opt, v);
    if (cs_params_get(&scratch, v, &x) != 0)
        return cmd_usage_error("%s: '%s' is not a parameter key (src/params.h)", opt, v);
    if (*n == MAX_NAMED)
        return cmd_usage_error("%s: at most %d keys", opt, MAX_NAMED);
    snprintf(list[(*n)++], 64, "%s", v);
    return 0;
}

static int take_popt(void *ctx, int c, const char *v)
{
    struct popts *o = ctx;
    const char **path = c == 'x'   ? &o->sched
                        : c == 'G' ? &o->gen
                        : c == 'o' ? &o->out
                        : c == 'q' ? &o->props
                        : c == 'r' ? &o->report
                        : c == 'C' ? &o->cases
                        : c == 'p' ? &o->protocols
                        : c == 'V' ? &o->validate
                                   : NULL;
    struct cs_error err;
    int code;

    if (path != NULL) {
        *path = v;
        return 0;
    }
    switch (c) {
    case 'f':
        o->fam = cs_platform_family_parse(v);
        o->fam_name = v;
        return o->fam ? 0 : cmd_usage_error("--family: unknown platform family '%s'", v);
    case 'N':
        return cmd_opt_int("--nodes", v, 1, 128, &o->nodes, "1 to 128");
    case 'u':
        return (o->gpu = cs_gpu_kind_parse(v)) != 0
                   ? 0
                   : cmd_usage_error("--gpu takes a100, h100, h100-pcie or h200, not '%s'", v);
    case 'k':
        if ((o->nic = cs_platform_nic_parse(v)) == 0)
            return cmd_usage_error("--nic takes hdr, roce100 or 2x100, not '%s'", v);
        return 0;
    case 'K':
        o->nic_socket = strcmp(v, "same") == 0 ? 1 : strcmp(v, "other") == 0 ? 2 : 0;
        return o->nic_socket ? 0 : cmd_usage_error("--nic-socket takes same or other, not '%s'", v);
    case 's':
        o->sockets = strcmp(v, "1") == 0 ? 1 : strcmp(v, "2") == 0 ? 2 : 0;
        return o->sockets ? 0 : cmd_usage_error("--sockets takes 1 or 2, not '%s'", v);
    case 'v':
        cs_error_init(&err);
        if (cs_nccl_version_parse(v, &code, &err) != 0)
            return cmd_usage_error("--nccl: %s", err.msg);
        snprintf(o->nccl, sizeof(o->nccl), "%s", v);
        return 0;
    case 'H':
        return cmd_opt_int("--channels", v, 1, 32, &o->channels, "1 to 32");
    case 'c':
        o->coll = cs_meas_coll_parse(v);
        return o->coll && o->coll != CS_MEAS_SENDRECV
                   ? 0
                   : cmd_usage_error("--collective: '%s' is not allreduce, allgather or "
                                     "reducescatter",
                                     v);
    case 'n':
        return cmd_opt_int("--ranks", v, 2, 1 << 20, &o->ranks, "an integer >= 2");
    case 'P':
    case 'S':
        return take_param(o, c, v);
    case 'F':
        return take_key("--fit", v, o->fit, &o->nfit);
    case 'X':
        return take_key("--fix", v, o->fix, &o->nfix);
    case 'i':
        return cmd_opt_int("--max-iter", v, 1, 200, &o->max_iter, "1 to 200");
    case 'j':
        return cmd_opt_int("--jobs", v, 1, 64, &o->jobs, "1 to 64");
    case 'h':
        if (o->nheld == (int)(sizeof(o->held) / sizeof(o->held[0])))
            return cmd_usage_error("--held-out: at most 16 tables");
        o->held[o->nheld++] = v;
        return 0;
    case 'Q':
        o->quiet = 1;
        return 0;
    }
    return CS_EXIT_USAGE;
}

static int platform_args(int argc, char **argv, struct popts *o)
{
    struct cmd_opts t;
    int rc;

    cs_params_init(&o->base);
    cmd_opts_init(&t, platform_opts);
    o->max_iter = 30;
    o->jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
    o->jobs = o->jobs < 1 ? 1 : o->jobs > 8 ? 8 : o->jobs;
    if ((rc = cmd_getopts(argc, argv, "o:", t.opt, take_popt, o)) != 0)
        return rc;
    o->files = (const char **)argv + optind;
    o->nfiles = argc - optind;
    if (o->fam == 0)
        return cmd_usage_error("calibrate platform needs --family; see 'collsim help calibrate'");
    if ((o->nfiles == 0) == (o->cases == NULL) || o->out == NULL)
        return cmd_usage_error("calibrate platform needs TABLE... or --cases FILE (not both) and "
                               "-o PLATFORM.xml");
    if (o->sched && o->gen)
        return cmd_usage_error("--schedule and --gen exclude each other");
    for (int i = 0; i < o->nfit; i++)
        for (int j = 0; j < o->nfix; j++)
            if (strcmp(o->fit[i], o->fix[j]) == 0)
                return cmd_usage_error("%s is given to both --fit and --fix: fit it or keep it",
                                       o->fit[i]);
    if (o->cases &&
        (o->sched || o->gen || o->protocols || o->nccl[0] || o->channels || o->coll || o->ranks))
        return cmd_usage_error("--cases names each case's schedule, protocol and options; "
                               "--schedule, --gen, --protocols, --nccl, --channels, "
                               "--collective and --ranks are for TABLE...");
    if (o->nfiles + o->nheld > MAX_TABLES)
        return cmd_usage_error("calibrate platform: at most %d tables", MAX_TABLES);
    if (o->gpu && cs_platform_family_gpu(o->fam_name) != CS_GPU_A100 &&
        o->gpu != cs_platform_family_gpu(o->fam_name))
        return cmd_usage_error("%s is a %s platform; --gpu %s contradicts it", o->fam_name,
                               cs_gpu_kind_name(cs_platform_family_gpu(o->fam_name)),
                               cs_gpu_kind_name(o->gpu));
    if (o->nodes && o->fam != CS_FAM_DGX && o->fam != CS_FAM_PCIE_NET)
        return cmd_usage_error("--nodes applies to dgx-a100 / ndv4 and a100-pcie-net only");
    if ((o->nic || o->nic_socket) && o->fam != CS_FAM_DGX && o->fam != CS_FAM_PCIE_NET)
        return cmd_usage_error("--nic and --nic-socket apply to dgx-a100 / ndv4 and "
                               "a100-pcie-net only");
    if (o->sockets && o->fam != CS_FAM_PCIE_4GPU && o->fam != CS_FAM_NVBRIDGE)
        return cmd_usage_error("--sockets applies to a100-pcie-4gpu and a100-pcie-nvbridge only");
    return 0;
}

/* ---- tables as cases */

/* What a table says of itself: its ranks (busbw over algbw, or a gpus column) and its NCCL
 * version (an nccl_version column, or in raw nccl-tests output NCCL's "NCCL version" line, which
 * log_of read as log_version, 0 for none, or nccl-tests' nccl-library= header; 2.8 or later), ""
 * when none. 0, or an exit code. */
static int table_info(const struct popts *o, const char *path, int hint, int log_version,
                      int *ranks, int *tnodes, char *ver, size_t len)
{
    struct cs_csv *t = NULL;
    struct cs_error err;
    enum cs_meas_coll coll = o->coll ? o->coll : CS_MEAS_ALLREDUCE;
    int vc, gc, nc, code, g = 0;

    cs_error_init(&err);
    ver[0] = '\0';
    *tnodes = 0;
    if (cs_meas_read(path, &t, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    *ranks = o->ranks ? o->ranks : hint ? hint : cs_meas_infer_ranks(t, coll);
    /* the table's own gpus and nodes columns (the shared schema), where it has them: what it
     * says of its run is checked against what its numbers and the options say */
    gc = cs_csv_col_find(t, "gpus");
    nc = cs_csv_col_find(t, "nodes");
    if (gc >= 0 && t->nrows > 0 && cs_csv_cell(t, 0, gc)[0] != '\0' &&
        cs_parse_int(cs_csv_cell(t, 0, gc), 1, CS_NCCLINFO_MAX_RANKS, &g) != 0) {
        code = cmd_usage_error("%s:%d: gpus '%s' is not a count", path, t->lines[0],
                               cs_csv_cell(t, 0, gc));
        cs_csv_free(t);
        return code;
    }
    if (nc >= 0 && t->nrows > 0 && cs_csv_cell(t, 0, nc)[0] != '\0' &&
        cs_parse_int(cs_csv_cell(t, 0, nc), 1, CS_NCCLINFO_MAX_RANKS, tnodes) != 0) {
        code = cmd_usage_error("%s:%d: nodes '%s' is not a count", path, t->lines[0],
                               cs_csv_cell(t, 0, nc));
        cs_csv_free(t);
        return code;
    }
    if (*ranks < 2 && g > 0)
        *ranks = g;
    if (g > 0 && *ranks != g) {
        code =
            cmd_usage_error("%s:%d: its gpus column says %d ranks, but %s %d", path, t->lines[0], g,
                            o->ranks ? "--ranks says"
                            : hint   ? "its log says"
                                     : "busbw/algbw say",
                            *ranks);
        cs_csv_free(t);
        return code;
    }
    vc = cs_csv_col_find(t, "nccl_version");
    if (vc >= 0 && t->nrows > 0 && cs_nccl_version_parse(cs_csv_cell(t, 0, vc), &code, NULL) == 0)
        snprintf(ver, len, "%s", cs_csv_cell(t, 0, vc));
    cs_csv_free(t);
    if (ver[0] == '\0') {
        /* raw nccl-tests output: NCCL's own "NCCL version" line, else nccl-tests' header */
        code = log_version;
        if (code == 0)
            code = cs_meas_nccl_library(path);
        if (code >= CS_NCCL_RULE_MIN && code < CS_NCCL_VERSION_END)
            cs_nccl_version_name(code, ver, (unsigned)len);
    }
    if (*ranks < 2)
        return cmd_usage_error("%s: cannot infer the number of ranks from busbw/algbw; give "
                               "--ranks",
                               path);
    return 0;
}

/* The nodes the family's platform needs for ranks GPUs (--nodes, else from the ranks). */
static int family_nodes(const struct popts *o, int ranks)
{
    if (o->nodes)
        return o->nodes;
    if (o->fam == CS_FAM_DGX)
        return ranks > 8 && ranks % 8 == 0 ? ranks / 8 : 1;
    if (o->fam == CS_FAM_PCIE_NET)
        return ranks;
    return 1;
}

/* The communicator's channels NCCL builds on the family (--channels, else NCCL's on such
 * machines: 24 on an HGX A100 node, 16 across DGX nodes, 2 on PCIe; nccl-a100.md 2). */
static int family_channels(const struct popts *o, int nodes)
{
    if (o->channels)
        return o->channels;
    if (o->fam == CS_FAM_DGX)
        return nodes > 1 ? 16 : 24;
    return 2;
}

/* The machine keys of a gen:nccl spec that tell NCCL's tuning model what it sees on the
 * family: PCIe paths within a node (no LL128), NVLink otherwise. */
static const char *family_machine(const struct popts *o)
{
    switch (o->fam) {
    case CS_FAM_PCIE_4GPU:
        return ",pci=1,ll128=0,bus=24";
    case CS_FAM_NVBRIDGE:
        return ",pci=1,ll128=0,bus=24";
    case CS_FAM_PCIE_NET:
        return ",pci=1,ll128=0,bus=24,netbus=24";
    default:
        return "";
    }
}

/* An NCCL_DEBUG=INFO log (ncclinfo.h) as the table: it gives what a user would, the ranks and
 * nodes where --ranks and --nodes do not (*ranks, *nodes), and the schedule NCCL ran (gen
 * nccl:log=PATH: its version, channels and ring orders; `collsim nccl-log PATH` shows what was
 * read). 1 when path is such a log (of 2 ranks or more), else 0; *version is the log's NCCL
 * version either way (0 when it names none or path is no log). */
static int log_of(const struct popts *o, const char *path, int *ranks, int *nodes, int *version)
{
    struct cs_ncclinfo *log;
    int is_log;

    if (cs_ncclinfo_read(path, &log, NULL) != 0)
        return 0;
    *version = log->version;
    if ((is_log = log->nranks >= 2)) {
        *ranks = log->nranks;
        if (o->nodes == 0 && log->nnodes > 1)
            *nodes = log->nnodes;
    }
    cs_ncclinfo_free(log);
    return is_log;
}

/* A case name from a path: its file name without the extension, other characters as _. */
static void case_name(const char *path, char *buf, size_t len)
{
    const char *b = strrchr(path, '/');
    size_t k = 0;

    for (b = b ? b + 1 : path; *b && *b != '.' && k + 1 < len; b++)
        buf[k++] = isalnum((unsigned char)*b) || *b == '-' || *b == '_' ? *b : '_';
    buf[k] = '\0';
    if (k == 0)
        snprintf(buf, len, "table");
}

/* Table path as a case, its schedule and protocols from the options. 0, or an exit code. */
static int table_case(const struct popts *o, const char *path, int k, struct cs_case *c,
                      int *nodes_out, int *ranks_out)
{
    char name[160], sched[1200], proto[64], ver[16], ranks_opt[32], coll_opt[48], gpp_opt[64];
    char shared[1100];
    char *f[10];
    int ranks, nodes, nf = 5, rc, gpt = cs_meas_gpus_per_thread(path), given = 0;
    int is_log, lranks = 0, lnodes = 0, lversion = 0, tnodes = 0;
    const char *v;
    struct cs_error err;

    is_log = log_of(o, path, &lranks, &lnodes, &lversion);
    if ((rc = table_info(o, path, lranks, lversion, &ranks, &tnodes, ver, sizeof(ver))) != 0)
        return rc;
    case_name(path, name, sizeof(name) - 8);
    snprintf(name + strlen(name), 8, "-%d", (k + 1) % 100);
    if (o->nodes && tnodes && o->nodes != tnodes)
        return cmd_usage_error("%s: its nodes column says %d nodes, --nodes %d", path, tnodes,
                               o->nodes);
    nodes = lnodes > 1 ? lnodes : o->nodes ? o->nodes : tnodes ? tnodes : family_nodes(o, ranks);
    /* the family's machine must be the run's: DGX nodes of 8 GPUs, servers of one card, one
     * PCIe machine (else the fit would put network data on NVLink, or the reverse) */
    if (!o->sched && !o->gen &&
        ((o->fam == CS_FAM_DGX && nodes > 1 && ranks != 8 * nodes) ||
         (o->fam == CS_FAM_PCIE_NET && ranks != nodes) ||
         (o->fam != CS_FAM_DGX && o->fam != CS_FAM_PCIE_NET && nodes > 1)))
        return cmd_usage_error(
            "%s: %d ranks on %d node%s is not a machine of --family %s (%s); give a table of "
            "such a run, or --gen/--schedule with the run's own layout",
            path, ranks, nodes, nodes == 1 ? "" : "s", o->fam_name,
            o->fam == CS_FAM_DGX        ? "8 GPUs a node"
            : o->fam == CS_FAM_PCIE_NET ? "one GPU a server"
                                        : "one machine");
    sched[0] = '\0';
    /* the version named (--nccl), else the log's own (gen nccl reads it), else the table's */
    v = o->nccl[0] ? o->nccl : is_log && lversion != 0 ? "" : ver;
    if (is_log) /* the run's own communicator */
        snprintf(sched, sizeof(sched), "gen:nccl:log=%s%s%s%s", path, v[0] ? ",nccl=" : "", v,
                 family_machine(o));
    *nodes_out = nodes;
    *ranks_out = ranks;
    if (o->sched)
        snprintf(sched, sizeof(sched), "%s", o->sched);
    else if (o->gen)
        snprintf(sched, sizeof(sched), "gen:%s", o->gen);
    else if (strncmp(sched, "gen:nccl:log=", 13) == 0)
        ;
    else
        snprintf(sched, sizeof(sched), "gen:nccl:gpus=%d,nodes=%d,channels=%d%s%s%s%s", ranks,
                 nodes, family_channels(o, nodes), v[0] ? ",nccl=" : "", v, family_machine(o),
                 o->coll && o->coll != CS_MEAS_ALLREDUCE ? ",coll=" : "");
    if (!o->sched && !o->gen && o->coll && o->coll != CS_MEAS_ALLREDUCE)
        snprintf(sched + strlen(sched), sizeof(sched) - strlen(sched), "%s",
                 o->coll == CS_MEAS_ALLGATHER ? "allgather" : "reducescatter");
    if (o->protocols)
        snprintf(proto, sizeof(proto), "%s%s",
                 strcmp(o->protocols, "nccl") == 0 ? "" : "fastest:", o->protocols);
    else
        snprintf(proto, sizeof(proto), "%s",
                 strncmp(sched, "gen:nccl", 8) == 0 &&
                         (strstr(sched, "nccl=") || strncmp(sched, "gen:nccl:log=", 13) == 0)
                     ? "nccl"
                     : "fastest");
    f[0] = name;
    f[1] = (char *)path;
    /* a table of the shared data by its shared: name, so that a case file written from it
     * (--validate) reads it wherever the data is */
    {
        const char *d = getenv("CS_SHARED_DATA");
        char pre[1100];

        snprintf(pre, sizeof(pre), "%s/measurements/", d && *d ? d : "../shared/data");
        if (strncmp(path, pre, strlen(pre)) == 0 && strchr(path + strlen(pre), '/') == NULL) {
            snprintf(shared, sizeof(shared), "shared:%s", path + strlen(pre));
            f[1] = shared;
        }
    }
    f[2] = sched;
    f[3] = (char *)"-";
    f[4] = proto;
    snprintf(ranks_opt, sizeof(ranks_opt), "ranks=%d", ranks);
    f[nf++] = ranks_opt;
    if (o->coll) {
        snprintf(coll_opt, sizeof(coll_opt), "coll=%s", cs_meas_coll_name(o->coll));
        f[nf++] = coll_opt;
    }
    /* raw nccl-tests output says how many GPUs one thread launched in turn (-g) */
    for (int i = 0; i < o->ngiven; i++)
        given |= strcmp(o->given[i], "cs.gpus_per_process") == 0;
    if (gpt > 1 && !given) {
        snprintf(gpp_opt, sizeof(gpp_opt), "set=cs.gpus_per_process=%d", gpt);
        f[nf++] = gpp_opt;
    }
    cs_error_init(&err);
    if (cs_case_parse(c, f, nf, 1, path, 0, &err) != 0) {
        cs_case_cleanup(c);
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    return 0;
}

/* The calibration's tables: the cases of --cases, or one per TABLE, then the held-out ones. */
struct tables {
    struct cs_refit_table t[CS_CASES_MAX + 16];
    int n;
    int nodes; /* the most any table needs */
    int gpus;  /* the most ranks of any table (0: none known) */
};

static void tables_free(struct tables *T)
{
    for (int i = 0; i < T->n; i++) {
        cs_case_cleanup(&T->t[i].c);
        free(T->t[i].p);
    }
    T->n = 0;
}

/* Read case c's points into the next table. 0, or an exit code. */
static int add_table(struct tables *T, struct cs_case *c, int held_out)
{
    struct cs_refit_table *t = &T->t[T->n];
    struct cs_error err;

    cs_error_init(&err);
    t->c = *c;
    t->held_out = held_out;
    if (cs_case_read_points(&t->c, &t->p, &t->n, &err) != 0) {
        cmd_print_error(&err);
        cs_case_cleanup(&t->c);
        return CS_EXIT_USAGE;
    }
    if (t->c.gen_nccl && cs_nccl_past_rule(t->c.nccl)) {
        char note[400];

        fprintf(stderr, "collsim: calibrate platform: %s: warning: %s\n", t->c.vc.name,
                cs_nccl_rule_note(t->c.nccl, note, sizeof(note)));
    }
    T->n++;
    return 0;
}

/* The GPUs case c runs on: its ranks= option, else its generator's gpus= (0 when neither says:
 * gpus={n} of a table of GPU counts). */
static int case_gpus(const struct cs_case *c)
{
    const char *g = strncmp(c->vc.sched, "gen:", 4) == 0 ? strstr(c->vc.sched, "gpus=") : NULL;
    int n = 0;

    if (c->ranks > 0)
        return c->ranks;
    if (g != NULL && g[5] >= '0' && g[5] <= '9')
        n = atoi(g + 5);
    return n;
}

static int read_tables(const struct popts *o, struct tables *T)
{
    struct cs_error err;
    int rc = 0;

    cs_error_init(&err);
    T->nodes = o->nodes;
    if (o->cases) {
        struct cs_case *cases = NULL;
        int n = 0;

        if (cs_cases_read(o->cases, 1, &cases, &n, &err) != 0) {
            cmd_print_error(&err);
            return CS_EXIT_USAGE;
        }
        for (int i = 0; i < n; i++)
            if (strcmp(cases[i].vc.platform, "-") != 0) {
                rc = cmd_usage_error("%s:%d: case %s: calibrate fits one platform, so every "
                                     "case's PLATFORM is - (not '%s')",
                                     o->cases, cases[i].line, cases[i].vc.name,
                                     cases[i].vc.platform);
                break;
            }
        if (rc == 0 && cs_cases_check(cases, n, o->cases, &err) != 0) {
            cmd_print_error(&err);
            rc = CS_EXIT_USAGE;
        }
        for (int i = 0; i < n; i++) {
            if (rc == 0 && T->n < CS_CASES_MAX) {
                int g = case_gpus(&cases[i]);

                T->gpus = g > T->gpus ? g : T->gpus;
                rc = add_table(T, &cases[i], 0); /* the table owns the case now */
                continue;
            }
            cs_case_cleanup(&cases[i]);
        }
        free(cases);
    }
    for (int k = 0; k < o->nfiles + o->nheld && rc == 0; k++) {
        struct cs_case c;
        int nodes = 0, ranks = 0;

        rc = table_case(o, k < o->nfiles ? o->files[k] : o->held[k - o->nfiles], k, &c, &nodes,
                        &ranks);
        if (rc == 0) {
            T->nodes = nodes > T->nodes ? nodes : T->nodes;
            T->gpus = ranks > T->gpus ? ranks : T->gpus;
            rc = add_table(T, &c, k >= o->nfiles);
        }
    }
    return rc;
}

/* ---- the fit */

static void progress(void *ctx, int iter, double cost, double lambda, int evals)
{
    const struct popts *o = ctx;

    (void)lambda;
    if (!o->quiet)
        fprintf(stderr, "calibrate: iteration %d, cost %.6g, %d predictions of the tables\n", iter,
                cost, evals);
}

/* The keys to fit: the candidates, --fit, less --fix. */
static int choose_keys(const struct popts *o, const struct cs_refit *r, struct cs_mfit_key *keys,
                       int *n)
{
    char cand[CS_MFIT_MAX_KEYS][64];
    int nc = 0;

    cs_refit_candidates(r, cand, CS_MFIT_MAX_KEYS, &nc);
    for (int j = 0; j < o->nfit && nc < CS_MFIT_MAX_KEYS; j++) {
        int dup = 0;

        for (int i = 0; i < nc; i++)
            dup |= strcmp(cand[i], o->fit[j]) == 0;
        if (!dup)
            snprintf(cand[nc++], 64, "%s", o->fit[j]);
    }
    *n = 0;
    for (int i = 0; i < nc; i++) {
        int fixed = 0;

        for (int j = 0; j < o->nfix; j++)
            fixed |= strcmp(cand[i], o->fix[j]) == 0;
        if (fixed)
            continue;
        memset(&keys[*n], 0, sizeof(keys[*n]));
        snprintf(keys[(*n)++].key, sizeof(keys[0].key), "%.63s", cand[i]);
    }
    if (*n == 0)
        return cmd_usage_error("calibrate platform: no parameter left to fit");
    return 0;
}

/* ---- the report */

static const char *fmt_value(const char *key, double v, char *buf, size_t n)
{
    if (strstr(key, "_s") != NULL && strstr(key, "_Bps") == NULL)
        return cs_calib_fmt_time(v, buf, n);
    if (strstr(key, "_Bps") != NULL)
        return cs_calib_fmt_bw(v, buf, n);
    snprintf(buf, n, "%.4g", v);
    return buf;
}

static const char *verdict(const struct cs_mfit_key *K)
{
    if (K->insensitive)
        return "insensitive: no size depends on it; its value as given";
    if (K->at_bound)
        return "fitted, at the edge of its range";
    if (cs_mfit_weak(K))
        return "weakly identified: its interval spans more than half its prior's (the data move "
               "it, they do not pin it)";
    if (K->identified)
        return "fitted";
    if (fabs(log(K->value / K->prior)) < 0.05)
        return "stayed at its prior: the data do not identify it";
    return "not identified: moved until no size depends on it much (bounded on one side)";
}

/* Whether a key is a time (a latency or a cost: cs.launch_s, cs.link_lat_s.CLASS, ...) rather
 * than a rate or a share (cs.link_Bps.CLASS, cs.link_eff.PROTO.CLASS, ...). */
static int is_time_key(const char *key)
{
    size_t n;

    /* the name's second part: cs.call_s.PROTO.CLASS and the like name a protocol and a class */
    if (strncmp(key, "cs.", 3) != 0)
        return 0;
    n = strcspn(key + 3, ".");
    return n >= 2 && key[3 + n - 2] == '_' && key[3 + n - 1] == 's';
}

/* What the tables decide: where every key they pin is a rate or a share (a table of large sizes
 * only) or every one is a time (small sizes only), the report says so. */
static void report_kinds(FILE *rep, const struct cs_mfit_key *keys, int nkeys)
{
    int times = 0, rates = 0;

    for (int k = 0; k < nkeys; k++) {
        const struct cs_mfit_key *K = &keys[k];

        if (K->insensitive || !K->identified || cs_mfit_weak(K))
            continue;
        if (is_time_key(K->key))
            times++;
        else
            rates++;
    }
    if (rates > 0 && times == 0)
        fprintf(rep, "\nOnly rates and shares are fitted: no size of these tables pins a latency "
                     "or a per-call cost (their times are the bandwidth's), so every time key "
                     "keeps its prior or a value the data do not decide.\n");
    else if (times > 0 && rates == 0)
        fprintf(rep, "\nOnly latencies and costs are fitted: no size of these tables pins a "
                     "bandwidth, a per-threadblock rate or a protocol's share of a link, so "
                     "every rate key keeps its prior or a value the data do not decide.\n");
}

static void report_keys(FILE *rep, const struct cs_mfit_key *keys, int nkeys,
                        const struct cs_mfit_result *res)
{
    char a[64], b[64], c[64], d[64];

    fprintf(rep, "\n## Keys\n\n| key | prior | fitted | 95%% interval | verdict |\n"
                 "|---|---|---|---|---|\n");
    for (int k = 0; k < nkeys; k++) {
        const struct cs_mfit_key *K = &keys[k];

        fprintf(rep, "| `%s` | %s | %s | %s .. %s | %s |\n", K->key,
                fmt_value(K->key, K->prior, a, sizeof(a)),
                fmt_value(K->key, K->value, b, sizeof(b)),
                fmt_value(K->key, K->ci_lo, c, sizeof(c)),
                fmt_value(K->key, K->ci_hi, d, sizeof(d)), verdict(K));
    }
    report_kinds(rep, keys, nkeys);
    if (res->npairs > 0) {
        fprintf(rep, "\nPairs the data cannot tell apart (they fix a combination, not each):");
        for (int i = 0; i < res->npairs; i++)
            fprintf(rep, "%s `%s` and `%s` (correlation %+.3f)", i ? ";" : "",
                    keys[res->pairs[i].a].key, keys[res->pairs[i].b].key, res->pairs[i].corr);
        fprintf(rep, ".\n");
    }
    fprintf(rep,
            "\n%d iteration%s of Levenberg-Marquardt in all its passes, %d predictions of the "
            "tables, %s; "
            "residual scale %.2f%% (ln units), %d degrees of freedom.\n",
            res->iters, res->iters == 1 ? "" : "s", res->evals,
            res->converged ? "converged" : "its last pass stopped at --max-iter", 100 * res->sigma,
            res->dof);
}

/* One table's sizes and statistics. */
static void report_table(FILE *rep, const struct cs_refit_table *T)
{
    char a[64], b[64], why[512];
    struct cs_valid_stats st;

    fprintf(rep, "\n### %s%s\n\nMeasurement `%s`; schedule `%s`; protocol %s.\n\n", T->c.vc.name,
            T->held_out ? " (held out: predicted, not fitted)" : "", T->c.vc.meas_label,
            T->c.vc.sched,
            T->c.by_nccl      ? "NCCL's own pick per size"
            : T->c.vc.fastest ? "the fastest per size"
                              : T->c.proto[0]);
    if (T->c.gen_nccl && cs_nccl_rule_note(T->c.nccl, why, sizeof(why)) != NULL)
        fprintf(rep, "Note: %s.\n\n", why);
    fprintf(rep, "| size (B) | measured | predicted | protocol | error | |\n"
                 "|---|---|---|---|---|---|\n");
    for (int j = 0; j < T->n; j++) {
        const struct cs_valid_point *q = &T->p[j];

        cs_valid_contradiction_text(T->p, T->n, j, why, sizeof(why));
        if (isfinite(q->pred_s))
            fprintf(rep, "| %.0f | %s | %s | %s | %+.2f%% | %s%s |\n", q->size_bytes,
                    cs_calib_fmt_time(q->meas_s, a, sizeof(a)),
                    cs_calib_fmt_time(q->pred_s, b, sizeof(b)), q->proto,
                    100 * (q->pred_s - q->meas_s) / q->meas_s, why[0] ? "contradicts: " : "", why);
        else
            fprintf(rep, "| %.0f | %s | - | - | - | no prediction %s |\n", q->size_bytes,
                    cs_calib_fmt_time(q->meas_s, a, sizeof(a)), why);
    }
    cs_valid_stats(T->p, T->n, CS_BAND_ALL, 0, &st);
    fprintf(rep, "\nResidual over %d of %d sizes: median |error| %.2f%%, max |error| %.2f%%.\n",
            st.n, T->n, 100 * st.median_abs, 100 * st.max_abs);
    if (st.ncontra > 0)
        fprintf(rep,
                "Left out of the max where the table contradicts itself (%d size%s, named "
                "above): max |error| %.2f%% over the other %d.\n",
                st.ncontra, st.ncontra == 1 ? "" : "s", 100 * st.max_kept, st.n - st.ncontra);
    for (int b2 = CS_BAND_SMALL; b2 < CS_NBANDS; b2++) {
        cs_valid_stats(T->p, T->n, (enum cs_band)b2, 0, &st);
        if (st.n > 0)
            fprintf(rep, "%s %s (%d sizes): median |error| %.2f%%, max |error| %.2f%%.\n",
                    b2 == CS_BAND_SMALL ? "Band" : "    ", cs_band_name((enum cs_band)b2), st.n,
                    100 * st.median_abs, 100 * st.max_abs);
    }
}

static void report_head(FILE *rep, const struct popts *o, const struct tables *T,
                        const struct cs_platform_spec *spec)
{
    int nfit = 0;

    fprintf(rep, "# collsim calibrate platform report\n\nFamily %s", o->fam_name);
    if (spec->nodes > 1)
        fprintf(rep, ", %d nodes", spec->nodes);
    fprintf(rep, "; fitted on");
    for (int i = 0; i < T->n; i++)
        if (!T->t[i].held_out)
            fprintf(rep, "%s `%s` (case %s)", nfit++ ? "," : "", T->t[i].c.vc.meas_label,
                    T->t[i].c.vc.name);
    fprintf(rep, ".\n");
}

/* ---- outputs */

static void note_keys(struct popts *o, const struct cs_mfit_key *keys, int nkeys,
                      const struct tables *T)
{
    char files[600] = "", a[64], b[64];

    for (int i = 0; i < T->n && strlen(files) < 500; i++)
        if (!T->t[i].held_out)
            snprintf(files + strlen(files), sizeof(files) - strlen(files), "%s%.200s",
                     files[0] ? " " : "", T->t[i].c.vc.meas_label);
    for (int k = 0; k < nkeys; k++) {
        const struct cs_mfit_key *K = &keys[k];
        char text[512];

        if (K->insensitive || K->value == K->prior)
            continue;
        snprintf(text, sizeof(text),
                 "fit through the model: collsim calibrate platform on %s; 95%% interval %s to "
                 "%s%s",
                 files, fmt_value(K->key, K->ci_lo, a, sizeof(a)),
                 fmt_value(K->key, K->ci_hi, b, sizeof(b)),
                 K->identified ? "" : " (not identified by the data)");
        cs_param_notes_put(&o->notes, K->key, text);
    }
}

/* The props file: the fitted keys, then the given ones, each after its source. */
static int write_props(const struct popts *o, const struct cs_params *p,
                       const struct cs_mfit_key *keys, int nkeys, struct cs_error *err)
{
    struct cs_outfile of;

    if (cs_outfile_open(&of, o->props, err) != 0)
        return CS_ERR_IO;
    fprintf(of.fp, "# collsim calibrate platform --family %s: the parameters of %s\n", o->fam_name,
            o->out);
    for (int k = 0; k < nkeys + o->ngiven; k++) {
        const char *key = k < nkeys ? keys[k].key : o->given[k - nkeys];
        const char *src = cs_param_notes_get(&o->notes, key);
        double v = 0;
        int dup = 0;

        if (k < nkeys && (keys[k].insensitive || keys[k].value == keys[k].prior))
            continue; /* as given: the fit did not move it */
        for (int j = 0; j < nkeys && k >= nkeys; j++)
            dup |= strcmp(keys[j].key, key) == 0 && !keys[j].insensitive &&
                   keys[j].value != keys[j].prior;
        if (dup)
            continue;
        cs_params_get(p, key, &v);
        fprintf(of.fp, "<!-- %s -->\n<prop id=\"%s\" value=\"%.9g\"/>\n", src ? src : "given", key,
                v);
    }
    return cs_outfile_close(&of, err);
}

static int write_buffer(const char *path, const char *buf, size_t len, struct cs_error *err)
{
    struct cs_outfile of;
    int rc = cs_outfile_open(&of, path, err);

    if (rc != 0)
        return rc;
    fwrite(buf, 1, len, of.fp);
    return cs_outfile_close(&of, err);
}

/* --validate: the tables as `collsim validate` cases on the written platform. */
static int write_validate(const struct popts *o, const struct tables *T, struct cs_error *err)
{
    struct cs_outfile of;

    if (cs_outfile_open(&of, o->validate, err) != 0)
        return CS_ERR_IO;
    fprintf(of.fp,
            "# collsim calibrate platform --family %s: its tables predicted on %s\n"
            "# collsim validate %s -o DIR\n",
            o->fam_name, o->out, o->validate);
    for (int i = 0; i < T->n; i++)
        cs_case_write(of.fp, &T->t[i].c, o->out);
    return cs_outfile_close(&of, err);
}

/* The family's spec as the options and tables say. */
static int make_spec(struct popts *o, const struct tables *T, struct cs_platform_spec *spec)
{
    cs_platform_spec_init(spec, o->fam);
    spec->gpu = o->gpu ? o->gpu : cs_platform_family_gpu(o->fam_name);
    if (T->nodes > 0 && (o->fam == CS_FAM_DGX || o->fam == CS_FAM_PCIE_NET))
        spec->nodes = T->nodes;
    /* as many GPUs as the tables' ranks (--cases: the cases' ranks or gpus=): DGX nodes of 8,
     * servers of one card, or one machine's PCIe cards (never fewer than the family's machine
     * has: ranks 0 and 1 of 2 stay on one CPU socket of it, as before) */
    if (o->nodes == 0 && o->fam == CS_FAM_DGX && T->gpus > 8 * spec->nodes)
        spec->nodes = (T->gpus + 7) / 8;
    if (o->nodes == 0 && o->fam == CS_FAM_PCIE_NET && T->gpus > spec->nodes)
        spec->nodes = T->gpus;
    if ((o->fam == CS_FAM_PCIE_4GPU || o->fam == CS_FAM_NVBRIDGE) && T->gpus > spec->gpus_per_node)
        spec->gpus_per_node = T->gpus;
    spec->nic = o->nic ? o->nic : spec->nic;
    spec->nic_other_socket = o->nic_socket == 2;
    spec->one_socket = o->sockets == 1;
    spec->notes = &o->notes;
    spec->origin = "collsim calibrate platform (fit through the model)";
    if (o->nic && cs_platform_set_nic(o->nic, &o->base, &o->notes) != 0)
        return cmd_usage_error("too many --set and --params parameters");
    if (cs_platform_spec_params(spec, &o->base, &o->notes) != 0)
        return cmd_usage_error("too many --set and --params parameters");
    return 0;
}

static int calibrate(struct popts *o, struct tables *T, const char *tmp, FILE *rep)
{
    struct cs_platform_spec spec;
    struct cs_refit r = {0};
    struct cs_mfit_key keys[CS_MFIT_MAX_KEYS];
    struct cs_mfit_opts mo = {0};
    struct cs_mfit_result res;
    struct cs_params fitted;
    struct cs_error err;
    int nkeys = 0, rc;

    cs_error_init(&err);
    if ((rc = make_spec(o, T, &spec)) != 0)
        return rc;
    r = (struct cs_refit){&spec, o->base, T->t, T->n, tmp, o->jobs};
    if ((rc = choose_keys(o, &r, keys, &nkeys)) != 0)
        return rc;
    mo.max_iter = o->max_iter;
    mo.max_rel = 0.05;
    mo.progress = progress;
    mo.progress_ctx = o;
    if (!o->quiet)
        fprintf(stderr, "calibrate: %d keys over %d tables\n", nkeys, T->n);
    if (cs_refit_run(&r, keys, nkeys, NULL, &mo, &res, &fitted, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    report_head(rep, o, T, &spec);
    report_keys(rep, keys, nkeys, &res);
    fprintf(rep, "\n## Tables\n");
    for (int i = 0; i < T->n; i++)
        report_table(rep, &T->t[i]);
    note_keys(o, keys, nkeys, T);
    if (cs_platform_write(&spec, &fitted, o->out, &err) != 0 ||
        (o->props && write_props(o, &fitted, keys, nkeys, &err) != 0) ||
        (o->validate && write_validate(o, T, &err) != 0)) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    return 0;
}

int cmd_calibrate_platform(int argc, char **argv)
{
    struct popts *o = calloc(1, sizeof(*o));
    struct tables *T = calloc(1, sizeof(*T));
    char tmp[] = "/tmp/collsim-calibrate-XXXXXX", *repbuf = NULL;
    size_t replen = 0;
    FILE *rep = NULL;
    struct cs_error err;
    int fd = -1, rc;

    cs_error_init(&err);
    if (o == NULL || T == NULL)
        rc = cmd_usage_error("out of memory");
    else if ((rc = platform_args(argc, argv, o)) == 0 && (rc = read_tables(o, T)) == 0) {
        fd = cs_cleanup_mkstemps(tmp, 0); /* removed on a signal too */
        rep = fd < 0 ? NULL : open_memstream(&repbuf, &replen);
        if (rep == NULL)
            rc = cmd_usage_error("cannot create a temporary file or buffer");
        else
            rc = calibrate(o, T, tmp, rep);
        if (rep != NULL)
            fclose(rep);
        if (rc == 0 && o->report && write_buffer(o->report, repbuf, replen, &err) != 0) {
            cmd_print_error(&err);
            rc = CS_EXIT_USAGE;
        }
    }
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
        cs_cleanup_drop(tmp);
    }
    free(repbuf);
    if (T != NULL)
        tables_free(T);
    free(T);
    free(o);
    return rc;
}
