/* cases.h: validation and calibration cases: a measured table, the schedule and platform that
 * predict it, the protocol choice and the case's own parameters; the case file, a case's
 * measured points, and their predictions. `collsim validate` compares them, `collsim calibrate
 * platform --cases` fits a platform to them.
 *
 * A case line: NAME MEASUREMENT SCHEDULE PLATFORM PROTOCOL [OPTION=VALUE...]
 *   MEASUREMENT a table in the shared measurements schema or raw nccl-tests output
 *               (shared:FILE reads $CS_SHARED_DATA/measurements/FILE, default ../shared/data);
 *   SCHEDULE    an MSCCL XML path or gen:SPEC (`collsim predict --gen SPEC`); gen:nccl:... without
 *               size or protocol predicts each size on what `gen nccl` writes there;
 *   PLATFORM    a platform file, or - for the platform being fitted (calibrate);
 *   PROTOCOL    LL, LL128, Simple, fastest[:P,P...] (the fastest per size), or nccl (gen:nccl
 *               only: the protocol NCCL's own tuning model picks at each size);
 *   OPTIONS     ranks=N coll=allreduce|allgather|reducescatter set=KEY=VALUE params=FILE
 *               fit=MIN:MAX sizes=MIN:MAX size=N target=nvswitch8|other nccl=VERSION.
 * `#` starts a comment; `#: NAME: text` after a case adds a note to it. {n} in a schedule or
 * platform is replaced by the GPU count of a table of time against GPU count. */
#ifndef CS_CASES_H
#define CS_CASES_H

#include <stdio.h>

#include "error.h"
#include "params.h"
#include "valid.h"

#define CS_CASE_MAX_OPS 48
#define CS_CASE_MAX_PROTOS 3
#define CS_CASES_MAX 64

/* A change to the platform's parameters, applied in the case line's order after loading it. */
struct cs_case_op {
    char *arg;   /* set=KEY=VALUE: "KEY=VALUE"; params=FILE: the path */
    int is_file; /* params=FILE, read with cs_params_read_props */
};

struct cs_case {
    struct cs_valid_case vc; /* as the case file writes it; vc.notes is notes */
    char meas[1024];         /* the measurement's path */
    char proto[CS_CASE_MAX_PROTOS][8];
    int nprotos;
    int by_nccl; /* PROTOCOL nccl: NCCL's own pick per size (a gen:nccl schedule) */
    int ranks;
    char coll[32];
    struct cs_case_op ops[CS_CASE_MAX_OPS];
    int nops;
    double size_min, size_max; /* sizes compared */
    double point_size;         /* size= for tables of time against GPU count (bytes) */
    int nccl;                  /* nccl=VERSION: its code (cs_nccl_version_parse), else 0 */
    int gen_nccl;              /* a gen:nccl schedule (its version in nccl) */
    char *notes;               /* `#: NAME: text` lines of the case file, for the summary */
    char *options;             /* the OPTION=VALUE fields as given, blank-separated ("" none) */
    int line;
};

/* Read a case file into *cases (new, cs_cases_free) and *n. A platform of `-` is taken only when
 * allow_dash. 0, or CS_ERR_IO (unreadable) / CS_ERR_PARSE (a bad line, with file:line) /
 * CS_ERR_NOMEM, err set. */
int cs_cases_read(const char *path, int allow_dash, struct cs_case **cases, int *n,
                  struct cs_error *err);
void cs_cases_free(struct cs_case *cases, int n);

/* Before anything is predicted: every case's measurement, schedule file and platform file can
 * be read (a gen: schedule's coll= and the table's collective column are the case's coll=), and
 * its table has sizes in range. 0, or CS_ERR_IO / CS_ERR_INVALID / CS_ERR_PARSE with err at
 * file (the case file) and the case's line. */
int cs_cases_check(const struct cs_case *cases, int n, const char *file, struct cs_error *err);

/* One case from its fields (a case line split at blanks; file and line name it in errors): 0,
 * or CS_ERR_PARSE with err set. *c is overwritten; cs_case_cleanup frees what it holds. */
int cs_case_parse(struct cs_case *c, char **f, int nf, int allow_dash, const char *file, int line,
                  struct cs_error *err);
void cs_case_cleanup(struct cs_case *c);

/* The case's measured points within its sizes=, held out unless within its fit=, with the
 * places where the table contradicts itself marked (cs_valid_mark_contradictions). *p is new
 * (caller frees). 0, or a CS_ERR_* with err set (none in range: CS_ERR_INVALID). */
int cs_case_read_points(const struct cs_case *c, struct cs_valid_point **p, int *n,
                        struct cs_error *err);

/* Predict the case's points p[0..n) (from cs_case_read_points) on its platform, or on
 * plat_path when its platform is `-` (or always, when force is set): each point's pred_s (NAN
 * when nothing finished) and proto, the fastest of the case's protocols (or NCCL's pick). The
 * case's set= and params= apply after the platform is loaded. 0, or a CS_ERR_* with err set. */
int cs_case_predict(const struct cs_case *c, const char *plat_path, int force,
                    struct cs_valid_point *p, int n, struct cs_error *err);

/* The case as a line of a case file, its platform replaced by platform (NULL: its own), into fp:
 * NAME MEASUREMENT SCHEDULE PLATFORM PROTOCOL OPTIONS... */
void cs_case_write(FILE *fp, const struct cs_case *c, const char *platform);

/* The case's parameters (set=, params=) applied to p in order. 0, or a CS_ERR_* with err set. */
int cs_case_apply_params(const struct cs_case *c, struct cs_params *p, struct cs_error *err);

#endif
