/* cases.c: validation and calibration cases: the case file, measured points, predictions. */
#include "cases.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fdio.h"
#include "gen.h"
#include "meas.h"
#include "nccl.h"
#include "ncclinfo.h"
#include "parse.h"
#include "plan.h"
#include "platform.h"
#include "predict.h"

void cs_case_cleanup(struct cs_case *c)
{
    free(c->notes);
    c->notes = NULL;
    free(c->options);
    c->options = NULL;
    c->vc.notes = NULL;
    for (int i = 0; i < c->nops; i++)
        free(c->ops[i].arg);
    c->nops = 0;
}

void cs_cases_free(struct cs_case *cases, int n)
{
    for (int k = 0; cases != NULL && k < n; k++)
        cs_case_cleanup(&cases[k]);
    free(cases);
}

/* A set= or params= key a loaded platform cannot take (a link parameter, which SimGrid reads
 * from the platform's <link>s): CS_ERR_PARSE with err at file:line, else 0. `from` names a
 * params= file or is NULL. */
static int refuse_link_key(const char *key, const char *from, const char *file, int line,
                           struct cs_error *err)
{
    struct cs_error e;

    cs_error_init(&e);
    if (cs_platform_check_settable(key, &e) == 0)
        return 0;
    return cs_error_fail(err, CS_ERR_PARSE, file, line, "%s%s%s",
                         from ? "params file " : "set=", from ? from : "", e.msg);
}

/* A params= file must read cleanly now, so that a bad one names the case line; a link parameter
 * in it is refused as in set=. */
static int check_params_file(const char *path, const char *file, int line, struct cs_error *err)
{
    struct cs_params scratch;
    struct cs_param_notes *keys = calloc(1, sizeof(*keys)); /* the keys the file sets */
    struct cs_error e;
    char buf[2048], from[1100];
    int rc;

    if (keys == NULL)
        return cs_error_fail(err, CS_ERR_NOMEM, file, line, "out of memory");
    cs_params_init(&scratch);
    cs_error_init(&e);
    rc = cs_params_read_props(&scratch, path, keys, &e);
    if (rc == CS_ERR_IO)
        cs_error_set(err, file, line, "cannot open params file %s: %s", path, e.msg);
    else if (rc != 0)
        cs_error_set(err, file, line, "params file: %s", cs_error_format(&e, buf, sizeof(buf)));
    snprintf(from, sizeof(from), "%s: ", path);
    for (int i = 0; i < keys->n && rc == 0; i++)
        rc = refuse_link_key(keys->key[i], from, file, line, err);
    free(keys);
    return rc ? CS_ERR_PARSE : 0;
}

static const char *shared_dir(void)
{
    const char *d = getenv("CS_SHARED_DATA");

    return d && *d ? d : "../shared/data";
}

/* PROTOCOL: one of LL, LL128, Simple, nccl, or fastest[:P,P...]. 0 or -1. */
static int parse_protocols(struct cs_case *c, const char *f)
{
    int fastest = strncmp(f, "fastest", 7) == 0;
    char buf[64], *tok, *save;

    if (strcmp(f, "nccl") == 0) {
        c->by_nccl = 1;
        fastest = 1;
        f = "fastest";
    }
    if (fastest ? f[7] != '\0' && f[7] != ':' : strchr(f, ',') != NULL)
        return -1;
    c->vc.fastest = fastest && !c->by_nccl;
    snprintf(buf, sizeof(buf), "%s", !fastest ? f : f[7] == ':' ? f + 8 : "LL,LL128,Simple");
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        size_t n = strlen(c->vc.protos);

        if (c->nprotos == CS_CASE_MAX_PROTOS || cs_proto_parse(tok) == 0)
            return -1;
        snprintf(c->proto[c->nprotos++], sizeof(c->proto[0]), "%s", tok);
        snprintf(c->vc.protos + n, sizeof(c->vc.protos) - n, "%s%s", n ? "/" : "", tok);
    }
    return c->nprotos > 0 ? 0 : -1;
}

/* Queue set=KEY=VALUE or params=FILE. */
static int add_op(struct cs_case *c, const char *arg, int is_file)
{
    if (c->nops == CS_CASE_MAX_OPS || (c->ops[c->nops].arg = strdup(arg)) == NULL)
        return -1;
    c->ops[c->nops++].is_file = is_file;
    return 0;
}

/* Queue set=KEY=VALUE unless KEY is a link parameter: 0, -1 without '=', -2 when refused. */
static int add_set(struct cs_case *c, const char *kv, const char *file, int line,
                   struct cs_error *err)
{
    const char *eq = strchr(kv, '=');
    char key[256];

    if (eq == NULL)
        return -1;
    snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
    return refuse_link_key(key, NULL, file, line, err) != 0 ? -2 : add_op(c, kv, 0);
}

/* Copy v to out (len bytes) when it is one of the NULL-terminated words: 0, else -1. */
static int one_of(const char *v, const char *const *words, char *out, size_t len)
{
    for (; *words != NULL; words++)
        if (strcmp(v, *words) == 0) {
            snprintf(out, len, "%s", v);
            return 0;
        }
    return -1;
}

/* Replace every {n} in `in` by n. */
static void subst_n(char *out, size_t len, const char *in, int n)
{
    size_t k = 0;

    for (const char *p = in; *p && k + 12 < len; p++) {
        if (strncmp(p, "{n}", 3) == 0) {
            k += (size_t)snprintf(out + k, len - k, "%d", n);
            p += 2;
        } else {
            out[k++] = *p;
        }
    }
    out[k] = '\0';
}

/* The value of key in a generator spec ("ring:k=v,..." or "nccl:k=v,...") into out: 1 when
 * the spec has the key, else 0 and "". */
static int spec_str(const char *spec, const char *key, char *out, size_t len)
{
    size_t klen = strlen(key);

    out[0] = '\0';
    for (const char *p = strchr(spec, ':'); p != NULL; p = strchr(p, ',')) {
        p++;
        if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
            snprintf(out, len, "%.*s", (int)strcspn(p + klen + 1, ","), p + klen + 1);
            return 1;
        }
    }
    return 0;
}

/* The integer value of key in a gen:ring spec ("ring:k=v,k=v..."), dflt when absent: 0, or -1
 * when the value is not a count. */
static int spec_int(const char *spec, const char *key, int dflt, int *out)
{
    char v[32];

    *out = dflt;
    return spec_str(spec, key, v, sizeof(v)) ? cs_parse_int(v, 0, 1000000, out) : 0;
}

/* nccl=VERSION: a version the rule is sourced for, on a gen:ring schedule of one instance with
 * its GPU count. 0, or -2 with err set. */
static int nccl_option(struct cs_case *c, const char *v, const char *file, int line,
                       struct cs_error *err)
{
    const char *spec = c->vc.sched + 4;
    char ring[1200];
    struct cs_error e;
    int gpus, instances;

    cs_error_init(&e);
    if (cs_nccl_version_parse(v, &c->nccl, &e) != 0) {
        cs_error_set(err, file, line, "nccl=%s: %s", v, e.msg);
        return -2;
    }
    if (strncmp(c->vc.sched, "gen:ring", 8) != 0 || (spec[4] != '\0' && spec[4] != ':')) {
        cs_error_set(err, file, line, "nccl= needs a gen:ring schedule, not '%s'", c->vc.sched);
        return -2;
    }
    subst_n(ring, sizeof(ring), spec, 2); /* gpus={n}: any count will do for the check */
    if (spec_int(ring, "gpus", 0, &gpus) != 0 || gpus < 1 ||
        spec_int(ring, "instances", 1, &instances) != 0 || instances != 1) {
        cs_error_set(err, file, line,
                     "nccl= needs a ring spec with gpus=N and one instance, not '%s'", spec);
        return -2;
    }
    snprintf(c->vc.nccl, sizeof(c->vc.nccl), "%s", v);
    return 0;
}

/* "nccl:..." (sched_s less its "gen:") with protocol proto and size bytes into buf. */
static void nccl_spec_at(char *buf, size_t len, const char *sched_s, const char *proto, double size)
{
    snprintf(buf, len, "%s%cprotocol=%s,size=%.0f", sched_s + 4,
             strchr(sched_s + 4, ':') ? ',' : ':', proto, size);
}

/* A gen:nccl schedule: NCCL's channels and threads per size as nccl= gives a ring, and its
 * algorithm, from the spec (its nccl= key the version, default CS_NCCL_DEFAULT_VERSION). The spec
 * must generate at 1 MiB ({n} as 2). 0, or CS_ERR_PARSE with err set. */
static int gen_nccl_case(struct cs_case *c, const char *file, int line, struct cs_error *err)
{
    char spec[1200], at[1300];
    struct cs_nccl_width w;
    struct cs_error e;
    const char *v = strstr(c->vc.sched, "nccl="), *log;

    cs_error_init(&e);
    subst_n(spec, sizeof(spec), c->vc.sched, 2);
    nccl_spec_at(at, sizeof(at), spec, "Simple", 1 << 20);
    if (cs_gen_nccl_spec_width(at, &w, &e) != 0)
        return cs_error_fail(err, CS_ERR_PARSE, file, line, "%s: %s", c->vc.sched, e.msg);
    c->gen_nccl = 1;
    c->nccl = CS_NCCL_DEFAULT_VERSION;
    if (v == NULL && (log = strstr(c->vc.sched, "log=")) != NULL) {
        /* the log's version, which gen nccl takes (the generator read it) */
        struct cs_ncclinfo *info;
        char path[1100];

        snprintf(path, sizeof(path), "%.*s", (int)strcspn(log + 4, ","), log + 4);
        if (cs_ncclinfo_read(path, &info, NULL) == 0) {
            c->nccl = info->version;
            cs_ncclinfo_free(info);
        }
    }
    if (v != NULL) {
        char ver[16];

        snprintf(ver, sizeof(ver), "%.*s", (int)strcspn(v + 5, ","), v + 5);
        cs_nccl_version_parse(ver, &c->nccl, NULL); /* the generator checked it */
    }
    cs_nccl_version_name(c->nccl, c->vc.nccl, sizeof(c->vc.nccl));
    return 0;
}

/* One OPTION=VALUE of a case: 0, -1 when bad (the caller says so), -2 when err is set. */
static int parse_option(struct cs_case *c, const char *k, const char *v, const char *file, int line,
                        struct cs_error *err)
{
    static const char *const colls[] = {"allreduce", "allgather", "reducescatter", NULL};
    static const char *const targets[] = {"nvswitch8", "other", NULL};
    long long size;

    if (strcmp(k, "ranks") == 0)
        return cs_parse_int(v, 2, 1000000, &c->ranks) == 0 ? 0 : -1;
    if (strcmp(k, "coll") == 0)
        return one_of(v, colls, c->coll, sizeof(c->coll));
    if (strcmp(k, "set") == 0)
        return add_set(c, v, file, line, err);
    if (strcmp(k, "params") == 0)
        return check_params_file(v, file, line, err) != 0 ? -2 : add_op(c, v, 1);
    if (strcmp(k, "fit") == 0) {
        c->vc.has_fit = 1;
        return cs_meas_parse_range(v, &c->vc.fit_min, &c->vc.fit_max) ? -1 : 0;
    }
    if (strcmp(k, "sizes") == 0)
        return cs_meas_parse_range(v, &c->size_min, &c->size_max) ? -1 : 0;
    if (strcmp(k, "size") == 0) {
        if (cs_parse_size(v, 1, (long long)CS_MEAS_MAX_SIZE, &size) != 0)
            return -1;
        c->point_size = (double)size;
        return 0;
    }
    if (strcmp(k, "target") == 0)
        return one_of(v, targets, c->vc.target, sizeof(c->vc.target));
    if (strcmp(k, "nccl") == 0)
        return nccl_option(c, v, file, line, err);
    return -1;
}

int cs_case_parse(struct cs_case *c, char **f, int nf, int allow_dash, const char *file, int line,
                  struct cs_error *err)
{
    memset(c, 0, sizeof(*c));
    c->line = line;
    c->size_max = c->vc.fit_max = INFINITY;
    snprintf(c->coll, sizeof(c->coll), "allreduce");
    snprintf(c->vc.target, sizeof(c->vc.target), "other");
    c->point_size = 128;
    if (nf < 5)
        return cs_error_fail(
            err, CS_ERR_PARSE, file, line,
            "a case is NAME MEASUREMENT SCHEDULE PLATFORM PROTOCOL [OPTION=VALUE...]");
    if (f[0][strspn(f[0], "-_.0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")])
        return cs_error_fail(err, CS_ERR_PARSE, file, line,
                             "case name '%s': letters, digits, . _ - only", f[0]);
    if (f[0][0] == '.')
        return cs_error_fail(err, CS_ERR_PARSE, file, line,
                             "case name '%s': it names the case's output files, so it cannot "
                             "start with '.'",
                             f[0]);
    snprintf(c->vc.name, sizeof(c->vc.name), "%s", f[0]);
    snprintf(c->vc.meas_label, sizeof(c->vc.meas_label), "%s", f[1]);
    if (strncmp(f[1], "shared:", 7) == 0)
        snprintf(c->meas, sizeof(c->meas), "%s/measurements/%s", shared_dir(), f[1] + 7);
    else
        snprintf(c->meas, sizeof(c->meas), "%s", f[1]);
    snprintf(c->vc.sched, sizeof(c->vc.sched), "%s", f[2]);
    snprintf(c->vc.platform, sizeof(c->vc.platform), "%s", f[3]);
    if (strcmp(f[3], "-") == 0 && !allow_dash)
        return cs_error_fail(err, CS_ERR_PARSE, file, line,
                             "case %s: platform '-' is the one calibrate fits; validate needs a "
                             "platform file",
                             f[0]);
    if (strncmp(f[2], "gen:nccl", 8) == 0 && (f[2][8] == '\0' || f[2][8] == ':') &&
        gen_nccl_case(c, file, line, err) != 0)
        return CS_ERR_PARSE;
    if (parse_protocols(c, f[4]) != 0)
        return cs_error_fail(err, CS_ERR_PARSE, file, line,
                             "protocol '%s': LL, LL128, Simple, fastest, fastest:P,P... or nccl",
                             f[4]);
    if (c->by_nccl && !c->gen_nccl)
        return cs_error_fail(err, CS_ERR_PARSE, file, line,
                             "protocol nccl (NCCL's own pick) needs a gen:nccl schedule, not '%s'",
                             f[2]);
    {
        size_t len = 1;

        for (int i = 5; i < nf; i++)
            len += strlen(f[i]) + 1;
        if ((c->options = calloc(len, 1)) == NULL)
            return cs_error_fail(err, CS_ERR_NOMEM, file, line, "out of memory");
        for (int i = 5; i < nf; i++)
            snprintf(c->options + strlen(c->options), len - strlen(c->options), "%s%s",
                     i > 5 ? " " : "", f[i]);
    }
    for (int i = 5; i < nf; i++) {
        char *eq = strchr(f[i], '=');
        int rc = -1;

        if (eq != NULL) {
            *eq = '\0';
            /* each option once, but set= and params=, applied in turn */
            for (int j = 5; j < i && strcmp(f[i], "set") != 0 && strcmp(f[i], "params") != 0; j++)
                if (strncmp(f[j], f[i], (size_t)(eq - f[i])) == 0 && f[j][eq - f[i]] == '=') {
                    *eq = '=';
                    return cs_error_fail(err, CS_ERR_PARSE, file, line,
                                         "case option '%.*s' given twice ('%s', then '%s')",
                                         (int)(eq - f[i]), f[i], f[j], f[i]);
                }
            rc = parse_option(c, f[i], eq + 1, file, line, err);
            *eq = '=';
        }
        if (rc == -1)
            cs_error_set(err, file, line,
                         "bad case option '%s' (ranks=N, coll=..., set=KEY=VALUE, params=FILE, "
                         "fit=MIN:MAX, sizes=MIN:MAX, size=N, target=nvswitch8|other, "
                         "nccl=VERSION)",
                         f[i]);
        if (rc != 0)
            return CS_ERR_PARSE;
    }
    return 0;
}

/* A note for a case defined above: `#: NAME: text`. 0, or a CS_ERR_* with err set. */
static int add_note(struct cs_case *cases, int ncases, char *buf, const char *file, int line,
                    struct cs_error *err)
{
    char *name = buf + 2 + strspn(buf + 2, " "), *colon = strchr(name, ':'), *text, *nn;
    size_t old_len;
    int k = 0;

    if (colon == NULL)
        return 0;
    *colon = '\0';
    text = colon + 1 + strspn(colon + 1, " ");
    text[strcspn(text, "\r\n")] = '\0';
    while (k < ncases && strcmp(cases[k].vc.name, name) != 0)
        k++;
    if (k == ncases)
        return cs_error_fail(err, CS_ERR_PARSE, file, line, "note for an unknown case '%s'", name);
    old_len = cases[k].notes ? strlen(cases[k].notes) : 0;
    if ((nn = realloc(cases[k].notes, old_len + strlen(text) + 2)) == NULL)
        return cs_error_fail(err, CS_ERR_NOMEM, file, line, "out of memory");
    snprintf(nn + old_len, strlen(text) + 2, "%s\n", text);
    cases[k].notes = nn;
    cases[k].vc.notes = nn;
    return 0;
}

/* One line that is not a note: a case (appended to cases), or blank. 0, or a CS_ERR_*. */
static int add_case(struct cs_case *cases, int *ncases, char *buf, int allow_dash, const char *file,
                    int line, struct cs_error *err)
{
    char *f[64], *save, *tok;
    struct cs_case *c = &cases[*ncases];
    int nf = 0;

    for (tok = strtok_r(buf, " \t\r\n", &save); tok && tok[0] != '#' && nf < 64;
         tok = strtok_r(NULL, " \t\r\n", &save))
        f[nf++] = tok;
    if (nf == 0)
        return 0;
    if (*ncases == CS_CASES_MAX)
        return cs_error_fail(err, CS_ERR_PARSE, file, line, "more than %d cases", CS_CASES_MAX);
    if (cs_case_parse(c, f, nf, allow_dash, file, line, err) != 0) {
        cs_case_cleanup(c);
        return CS_ERR_PARSE;
    }
    (*ncases)++;
    for (int k = 0; k < *ncases - 1; k++)
        if (strcmp(cases[k].vc.name, c->vc.name) == 0)
            return cs_error_fail(err, CS_ERR_PARSE, file, line,
                                 "case '%s' again (first on line %d)", c->vc.name, cases[k].line);
    return 0;
}

int cs_cases_read(const char *path, int allow_dash, struct cs_case **out, int *nout,
                  struct cs_error *err)
{
    FILE *fp = cs_fopen_read(path);
    struct cs_case *cases;
    char buf[8192];
    int line = 0, rc = 0, n = 0;

    if (fp == NULL)
        return cs_error_fail(err, CS_ERR_IO, path, 0, "cannot open: %s", strerror(errno));
    cs_input_note(path);
    if ((cases = calloc(CS_CASES_MAX, sizeof(*cases))) == NULL) {
        fclose(fp);
        return cs_error_fail(err, CS_ERR_NOMEM, path, 0, "out of memory");
    }
    while (rc == 0 && fgets(buf, sizeof(buf), fp) != NULL) {
        line++;
        if (strchr(buf, '\n') == NULL && !feof(fp))
            rc = cs_error_fail(err, CS_ERR_PARSE, path, line, "line too long");
        else if (strncmp(buf, "#:", 2) == 0)
            rc = add_note(cases, n, buf, path, line, err);
        else
            rc = add_case(cases, &n, buf, allow_dash, path, line, err);
    }
    if (rc == 0 && ferror(fp))
        rc = cs_error_fail(err, CS_ERR_IO, path, line, "read error");
    fclose(fp);
    if (rc == 0 && n == 0)
        rc = cs_error_fail(err, CS_ERR_PARSE, path, 0, "no cases");
    if (rc != 0) {
        cs_cases_free(cases, n);
        return rc;
    }
    *out = cases;
    *nout = n;
    return 0;
}

/* Whether path can be read as a file: 0, or CS_ERR_IO with err at the case's line. */
static int check_input(const struct cs_case *c, const char *what, const char *path,
                       const char *file, struct cs_error *err)
{
    struct stat st;
    FILE *fp;

    if (stat(path, &st) != 0)
        return cs_error_fail(err, CS_ERR_IO, file, c->line, "case %s: %s %s: %s", c->vc.name, what,
                             path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return cs_error_fail(err, CS_ERR_IO, file, c->line, "case %s: %s %s: a directory",
                             c->vc.name, what, path);
    if ((fp = fopen(path, "r")) == NULL)
        return cs_error_fail(err, CS_ERR_IO, file, c->line, "case %s: %s %s: %s", c->vc.name, what,
                             path, strerror(errno));
    fclose(fp);
    return 0;
}

int cs_cases_check(const struct cs_case *cases, int n, const char *file, struct cs_error *err)
{
    for (int i = 0; i < n; i++) {
        const struct cs_case *c = &cases[i];
        const char *s = c->vc.sched;
        struct cs_valid_point *p = NULL;
        char path[1200], coll[64];
        int np = 0, rc;

        if ((rc = check_input(c, "measurement", c->meas, file, err)) != 0)
            return rc;
        if ((rc = cs_case_read_points(c, &p, &np, err)) != 0) {
            char where[sizeof(err->msg) + sizeof(err->file) + 16];

            /* the table's own file:line, after the case's */
            cs_error_format(err, where, sizeof(where));
            cs_error_init(err);
            return cs_error_fail(err, rc, file, c->line, "case %.100s: %.900s", c->vc.name, where);
        }
        free(p);
        if (strncmp(s, "gen:", 4) == 0) {
            spec_str(s + 4, "coll", coll, sizeof(coll));
            if (cs_meas_coll_parse(coll[0] ? coll : "allreduce") != cs_meas_coll_parse(c->coll))
                return cs_error_fail(err, CS_ERR_INVALID, file, c->line,
                                     "case %s: the schedule is %s, the case compares %s (its "
                                     "coll=)",
                                     c->vc.name, coll[0] ? coll : "allreduce", c->coll);
        } else if (strstr(s, "{n}") == NULL) {
            snprintf(path, sizeof(path), "%s%s%s",
                     strncmp(s, "shared:", 7) == 0 ? shared_dir() : "",
                     strncmp(s, "shared:", 7) == 0 ? "/msccl-xml/" : "",
                     s + (strncmp(s, "shared:", 7) == 0 ? 7 : 0));
            if ((rc = check_input(c, "schedule", path, file, err)) != 0)
                return rc;
        }
        if (strcmp(c->vc.platform, "-") != 0 && strstr(c->vc.platform, "{n}") == NULL &&
            (rc = check_input(c, "platform", c->vc.platform, file, err)) != 0)
            return rc;
    }
    return 0;
}

int cs_case_read_points(const struct cs_case *c, struct cs_valid_point **out, int *nout,
                        struct cs_error *err)
{
    struct cs_valid_point *p = NULL;
    int n = 0, m = 0, rc;

    if ((rc = cs_valid_read_measurement(c->meas, c->coll, c->ranks, &p, &n, err)) != 0)
        return rc;
    for (int i = 0; i < n; i++) {
        double s = p[i].size_bytes;

        if (s >= c->size_min && s <= c->size_max) {
            p[m] = p[i];
            p[m++].held_out = !c->vc.has_fit || !(s >= c->vc.fit_min && s <= c->vc.fit_max);
        }
    }
    if (m == 0) {
        free(p);
        return cs_error_fail(err, CS_ERR_INVALID, c->meas, 0, "case %s: no measured sizes in range",
                             c->vc.name);
    }
    cs_valid_mark_contradictions(p, m);
    *out = p;
    *nout = m;
    return 0;
}

void cs_case_write(FILE *fp, const struct cs_case *c, const char *platform)
{
    char proto[96];

    if (c->by_nccl)
        snprintf(proto, sizeof(proto), "nccl");
    else if (c->vc.fastest)
        snprintf(proto, sizeof(proto), "fastest:%s", c->vc.protos);
    else
        snprintf(proto, sizeof(proto), "%s", c->proto[0]);
    for (char *p = proto; *p; p++)
        *p = *p == '/' ? ',' : *p;
    fprintf(fp, "%s %s %s %s %s%s%s\n", c->vc.name, c->vc.meas_label, c->vc.sched,
            platform ? platform : c->vc.platform, proto, c->options && c->options[0] ? " " : "",
            c->options ? c->options : "");
}

int cs_case_apply_params(const struct cs_case *c, struct cs_params *p, struct cs_error *err)
{
    for (int i = 0; i < c->nops; i++) {
        const char *arg = c->ops[i].arg, *eq = strchr(arg, '=');
        char key[256];
        int rc;

        if (c->ops[i].is_file) {
            rc = cs_params_read_props(p, arg, NULL, err);
        } else {
            snprintf(key, sizeof(key), "%.*s", (int)(eq - arg), arg);
            rc = cs_params_set(p, key, eq + 1, err);
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ---- predictions */

struct result {
    struct cs_valid_point *p;
    int n;
};

/* The prediction at the smallest predicted size at or above `size` (a requested size is rounded
 * up to whole chunks of the schedule, so a size below the schedule's granularity is predicted at
 * the rounded-up size): the time in s, NAN on deadlock, INFINITY when absent. rows ascend. */
static double lookup(const struct cs_predict_row *rows, int n, double size)
{
    for (int k = 0; k < n; k++)
        if (rows[k].size_bytes >= size)
            return rows[k].refused == NULL && rows[k].hang == NULL &&
                           rows[k].res.status == CS_REPLAY_OK
                       ? rows[k].time_us * 1e-6
                       : NAN;
    return INFINITY;
}

/* What one load of a schedule and platform predicts: sizes lo..hi (bytes) for points
 * [from, to) of the result; `at` is the size looked up for them (0: each point's own size). */
struct span {
    double lo, hi, at;
    int from, to;
};

/* The size the points j of a span are predicted at. */
static double point_size(const struct span *sp, const struct result *res, int j)
{
    return sp->at > 0 ? sp->at : res->p[j].size_bytes;
}

/* The sizes to predict for a span: each point's own size rounded up to one the schedule accepts
 * (whole chunks; the sizes a table holds need not double). */
static int span_sizes(const struct cs_sched *sched, int type_bytes, const struct span *sp,
                      const struct result *res, long long **sizes, int *n)
{
    long long *v;
    int k = 0;

    if ((v = malloc((size_t)(sp->to - sp->from) * sizeof(*v))) == NULL)
        return CS_ERR_NOMEM;
    for (int j = sp->from; j < sp->to; j++) {
        long long r =
            cs_plan_round_size(sched, (long long)nearbyint(point_size(sp, res, j)), type_bytes);

        if (k == 0 || r > v[k - 1])
            v[k++] = r;
    }
    *sizes = v;
    *n = k;
    return 0;
}

/* Predict the span with protocol q and keep, per point, the fastest prediction so far. A size
 * the executor refuses, that would hang, or whose LL128 runs on a route NCCL keeps it off
 * (gen:nccl: NCCL would not pick it), is no prediction. */
static int predict_proto(const struct cs_case *c, int q, const struct cs_sched *sched,
                         const struct cs_platform *plat, const struct span *sp, struct result *res,
                         struct cs_error *err)
{
    struct cs_predict_opts o = {0};
    struct cs_predict_row *rows = NULL;
    long long *sizes = NULL;
    int n = 0, rc;

    o.proto = cs_proto_parse(c->proto[q]);
    o.type_bytes = cs_dtype_bytes("float");
    o.keep_going = 1;
    rc = span_sizes(sched, o.type_bytes, sp, res, &sizes, &n);
    if (rc == CS_ERR_USAGE)
        cs_error_set(err, NULL, 0, "sizes %.0f to %.0f B cannot be predicted", sp->lo, sp->hi);
    if (rc == 0 && (rows = calloc((size_t)n, sizeof(*rows))) == NULL)
        rc = CS_ERR_NOMEM;
    if (rc == 0 && (rc = cs_predict_run(sched, plat, &o, sizes, n, rows, err)) == 0) {
        int skip = c->gen_nccl && o.proto == CS_PROTO_LL128 && n > 0 && rows[0].warning;

        for (int j = sp->from; j < sp->to && !skip; j++) {
            double v = lookup(rows, n, point_size(sp, res, j));

            if (isfinite(v) && !(v >= res->p[j].pred_s)) {
                res->p[j].pred_s = v;
                snprintf(res->p[j].proto, sizeof(res->p[j].proto), "%s", c->proto[q]);
            }
        }
        for (int k = 0; k < n; k++)
            cs_predict_row_cleanup(&rows[k]);
    }
    free(rows);
    free(sizes);
    return rc;
}

/* Load sched_s (a path or gen:SPEC) and plat_s, apply the case's parameters, and predict the
 * span with protocol `only` (an index of c->proto; -1: every protocol of the case). With a
 * width w the schedule is NCCL's kernel on w's threads (replayed without the MSCCL executor's
 * costs, the protocol's CTA narrowed to w's threads: cs_params_narrow). */
static int load_and_predict(const struct cs_case *c, const char *sched_s, const char *plat_s,
                            int only, const struct cs_nccl_width *w, const struct span *sp,
                            struct result *res, struct cs_error *err)
{
    struct cs_predict_input in = {0};
    struct cs_sched *sched = NULL;
    struct cs_platform *plat = NULL;
    const char *coll;
    int rc;

    if (strncmp(sched_s, "gen:", 4) == 0)
        in.gen_spec = sched_s + 4;
    else
        in.sched_path = sched_s;
    in.plat_path = plat_s;
    rc = cs_predict_load(&in, &sched, &plat, err);
    if (rc != 0)
        return rc;
    coll = cs_coll_name(sched->coll);
    if (coll == NULL || cs_meas_coll_parse(coll) != cs_meas_coll_parse(c->coll))
        rc = cs_error_fail(err, CS_ERR_INVALID, sched_s, 0,
                           "the schedule is %s, the case compares %s (its coll=)",
                           coll ? coll : "of no known collective", c->coll);
    if (rc == 0)
        rc = cs_case_apply_params(c, &plat->params, err);
    if (only >= 0 && w != NULL) {
        sched->nccl_kernel = 1;
        sched->nccl_threads = w->threads;
        sched->nccl_max_threads = w->max_threads;
    }
    for (int q = 0; q < c->nprotos && rc == 0; q++)
        if (only < 0 || q == only)
            rc = predict_proto(c, q, sched, plat, sp, res, err);
    cs_platform_free(plat);
    cs_sched_free(sched);
    return rc;
}

/* The spec "gen:ring:..." with channels=nc in place of its own (or added). */
static void ring_with_channels(char *out, size_t len, const char *ring, int nc)
{
    const char *p = strchr(ring + 4, ':');
    size_t k = (size_t)snprintf(out, len, "gen:ring:channels=%d", nc);

    while (p != NULL && k < len) {
        size_t tl = strcspn(p + 1, ",");

        if (strncmp(p + 1, "channels=", 9) != 0)
            k += (size_t)snprintf(out + k, len - k, ",%.*s", (int)tl, p + 1);
        p = p[1 + tl] ? p + 1 + tl : NULL;
    }
}

/* nccl=: per protocol, the span's points in runs of the same NCCL channels and threads (sizes
 * ascend, so each run is contiguous); each run predicts on the ring with those channels, the
 * protocol's per-threadblock rate scaled by threads / maximum threads. */
static int predict_nccl(const struct cs_case *c, const char *ring, const char *plat_s,
                        const struct span *sp, struct result *res, struct cs_error *err)
{
    int gpus, nc, rc = 0;

    spec_int(ring + 4, "gpus", 0, &gpus);
    spec_int(ring + 4, "channels", 1, &nc);
    for (int q = 0; q < c->nprotos && rc == 0; q++) {
        enum cs_proto proto = cs_proto_parse(c->proto[q]);

        for (int j = sp->from; j < sp->to && rc == 0;) {
            struct span run = {point_size(sp, res, j), 0, sp->at, j, j};
            struct cs_nccl_width w, wj;
            char spec[1300];

            rc = cs_nccl_width(c->nccl, proto, (long long)nearbyint(run.lo), gpus, nc, &w, err);
            for (; rc == 0 && run.to < sp->to; run.to++) {
                rc =
                    cs_nccl_width(c->nccl, proto, (long long)nearbyint(point_size(sp, res, run.to)),
                                  gpus, nc, &wj, err);
                if (rc != 0 || wj.channels != w.channels || wj.threads != w.threads)
                    break;
            }
            if (rc != 0)
                break;
            run.hi = point_size(sp, res, run.to - 1);
            ring_with_channels(spec, sizeof(spec), ring, w.channels);
            rc = load_and_predict(c, spec, plat_s, q, &w, &run, res, err);
            j = run.to;
        }
    }
    return rc;
}

/* What NCCL runs for gen:nccl schedule sched_s with protocol proto at size bytes. */
static int nccl_width_at(const char *sched_s, const char *proto, double size,
                         struct cs_nccl_width *w, struct cs_error *err)
{
    char spec[1300];

    nccl_spec_at(spec, sizeof(spec), sched_s, proto, size);
    return cs_gen_nccl_spec_width(spec, w, err);
}

/* NCCL's own protocol at each point's size (protocol nccl): the index in c->proto of the one its
 * tuning model picks (cs_gen_nccl_spec_pick), into pick[j]. 0, or a CS_ERR_* with err set. */
static int nccl_picks(const struct cs_case *c, const char *sched_s, const struct span *sp,
                      const struct result *res, int *pick, struct cs_error *err)
{
    for (int j = sp->from; j < sp->to; j++) {
        char spec[1300];
        enum cs_proto q;
        int rc;

        nccl_spec_at(spec, sizeof(spec), sched_s, "Simple", point_size(sp, res, j));
        if ((rc = cs_gen_nccl_spec_pick(spec, &q, err)) != 0)
            return rc;
        pick[j] = -1;
        for (int k = 0; k < c->nprotos; k++)
            if (cs_proto_parse(c->proto[k]) == q)
                pick[j] = k;
    }
    return 0;
}

/* gen:nccl: per protocol, the span's points in runs over which NCCL keeps its algorithm,
 * channels and threads (sizes ascend, so each run is contiguous); each run predicts the schedule
 * gen nccl writes at the run's first size, the protocol's per-threadblock rate scaled by threads
 * / maximum threads. With protocol nccl only the protocol NCCL picks is predicted at a size. */
static int predict_gen_nccl(const struct cs_case *c, const char *sched_s, const char *plat_s,
                            const struct span *sp, struct result *res, struct cs_error *err)
{
    int *pick = NULL, rc = 0;

    if (c->by_nccl) {
        if ((pick = calloc((size_t)res->n, sizeof(*pick))) == NULL)
            return cs_error_fail(err, CS_ERR_NOMEM, NULL, 0, "out of memory");
        rc = nccl_picks(c, sched_s, sp, res, pick, err);
    }
    for (int q = 0; q < c->nprotos && rc == 0; q++) {
        for (int j = sp->from; j < sp->to && rc == 0;) {
            struct span run = {point_size(sp, res, j), 0, sp->at, j, j};
            struct cs_nccl_width w, wj;
            char spec[1300];

            if (pick != NULL && pick[j] != q) {
                j++;
                continue;
            }
            rc = nccl_width_at(sched_s, c->proto[q], run.lo, &w, err);
            for (; rc == 0 && run.to < sp->to && (pick == NULL || pick[run.to] == q); run.to++) {
                rc = nccl_width_at(sched_s, c->proto[q], point_size(sp, res, run.to), &wj, err);
                if (rc != 0 || wj.algo != w.algo || wj.channels != w.channels ||
                    wj.threads != w.threads)
                    break;
            }
            if (rc != 0)
                break;
            run.hi = point_size(sp, res, run.to - 1);
            snprintf(spec, sizeof(spec), "gen:");
            nccl_spec_at(spec + 4, sizeof(spec) - 4, sched_s, c->proto[q], run.lo);
            rc = load_and_predict(c, spec, plat_s, q, &w, &run, res, err);
            j = run.to;
        }
    }
    free(pick);
    return rc;
}

/* Load the schedule and platform (with {n} replaced by n) and predict the span with every
 * protocol of the case (with nccl=, per size on NCCL's channels and threads). */
static int predict_span(const struct cs_case *c, const char *plat_path, int force, int n,
                        const struct span *sp, struct result *res, struct cs_error *err)
{
    char sched_s[1200], plat_s[1200], given[1200];
    int rc;

    subst_n(given, sizeof(given), c->vc.sched, n);
    /* shared:FILE, an MSCCL XML of the shared data: $CS_SHARED_DATA/msccl-xml/FILE */
    if (snprintf(sched_s, sizeof(sched_s), "%s%s%s",
                 strncmp(given, "shared:", 7) == 0 ? shared_dir() : "",
                 strncmp(given, "shared:", 7) == 0 ? "/msccl-xml/" : "",
                 given + (strncmp(given, "shared:", 7) == 0 ? 7 : 0)) >= (int)sizeof(sched_s))
        return cs_error_fail(err, CS_ERR_INVALID, NULL, 0, "case %.100s: schedule path too long",
                             c->vc.name);
    subst_n(plat_s, sizeof(plat_s),
            force || strcmp(c->vc.platform, "-") == 0 ? plat_path : c->vc.platform, n);
    if (c->gen_nccl)
        rc = predict_gen_nccl(c, sched_s, plat_s, sp, res, err);
    else if (c->nccl)
        rc = predict_nccl(c, sched_s, plat_s, sp, res, err);
    else
        rc = load_and_predict(c, sched_s, plat_s, -1, NULL, sp, res, err);
    if (rc != 0 && rc != CS_ERR_NOMEM) {
        char msg[sizeof(err->msg)];

        snprintf(msg, sizeof(msg), "%s", err->msg);
        snprintf(err->msg, sizeof(err->msg), "case %.100s: %.880s", c->vc.name, msg);
    }
    return rc;
}

int cs_case_predict(const struct cs_case *c, const char *plat_path, int force,
                    struct cs_valid_point *p, int n, struct cs_error *err)
{
    struct result res = {p, n};
    /* the measured points ascend by size */
    struct span sp = {p[0].size_bytes, 1.01 * p[n - 1].size_bytes, 0, 0, n};
    int rc = 0;

    for (int i = 0; i < n; i++) {
        p[i].pred_s = NAN;
        p[i].proto[0] = '\0';
    }
    if ((force || strcmp(c->vc.platform, "-") == 0) && plat_path == NULL)
        return cs_error_fail(err, CS_ERR_USAGE, NULL, 0, "case %s: no platform to predict on",
                             c->vc.name);
    if (p[0].ranks == 0)
        return predict_span(c, plat_path, force, 0, &sp, &res, err);
    for (int i = 0; i < n && rc == 0; i++) {
        struct span one = {c->point_size, c->point_size, c->point_size, i, i + 1};

        rc = predict_span(c, plat_path, force, p[i].ranks, &one, &res, err);
    }
    return rc;
}
