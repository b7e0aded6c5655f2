/* verify.h: check a schedule: its structure (connections, limits, deadlock-free dependencies) and
 * its data result (a symbolic execution of chunks, like msccl-tools Check()). */
#ifndef CS_VERIFY_H
#define CS_VERIFY_H

#include "sched.h"

/* How many diagnostics a result keeps by default; the rest are only counted. */
#define CS_VERIFY_MAX_DIAGS 20

enum cs_verify_severity {
    CS_VERIFY_NOTE = 1, /* information (e.g. "custom: structural checks only") */
    CS_VERIFY_WARNING,  /* legal but suspicious, or over a limit of some runtimes only */
    CS_VERIFY_ERROR,
};

enum cs_verify_class {
    CS_VERIFY_STRUCTURE = 1, /* the schedule cannot run as written (includes deadlocks) */
    CS_VERIFY_DATA,          /* it runs, but computes the wrong thing */
};

enum cs_verify_verdict {
    CS_VERIFY_OK = 1,  /* no errors */
    CS_VERIFY_WRONG,   /* structurally valid, data result wrong */
    CS_VERIFY_INVALID, /* structural errors (a dependency cycle among them) */
};

/* One finding. `line` is the file line of the step, tb or gpu concerned (0 when none). */
struct cs_verify_diag {
    enum cs_verify_severity severity;
    enum cs_verify_class cls;
    int line;
    char *msg;
};

struct cs_verify_result {
    enum cs_verify_verdict verdict;
    int data_checked; /* the symbolic execution ran (not for custom, nor after fatal errors) */
    long nstructure_errors; /* totals, counting diagnostics that were not kept */
    long ndata_errors;
    long nwarnings;
    long nwrong_outputs; /* output chunks whose final value is wrong (a subset of ndata_errors) */
    int ndiags;          /* kept diagnostics, in the order found */
    struct cs_verify_diag *diags;
    long ndropped; /* diagnostics counted but not kept */
};

/* Which MSCCL runtime must load the schedule: any (the structural checks every runtime needs), the
 * executor (Azure/msccl-executor-nccl) or the legacy runtime (microsoft/msccl); msccl.md 1.1-1.2.
 */
enum cs_verify_runtime {
    CS_VERIFY_ANY = 0,
    CS_VERIFY_EXECUTOR,
    CS_VERIFY_LEGACY,
};

struct cs_verify_opts {
    int max_diags; /* <= 0: CS_VERIFY_MAX_DIAGS */
    enum cs_verify_runtime runtime;
    const char *text; /* the file as read, for the runtime's tokenizer rules; NULL: not checked */
    size_t len;
};

/* "executor" or "legacy"; 0 (CS_VERIFY_ANY) for anything else. */
enum cs_verify_runtime cs_verify_runtime_parse(const char *name);

/* cs_verify_check, plus what the chosen runtime loads and refuses: required <algo> attributes,
 * collective names, steps and threadblocks against its limits, nodes per rank, and (with text)
 * its tokenizer's rules. Those are structural errors; co-residency of the threadblocks a
 * warning. */
int cs_verify_check_opts(const struct cs_sched *sched, const struct cs_verify_opts *opts,
                         struct cs_verify_result **out);

/* Check `sched` (which may come from the XML reader or a generator: nothing is assumed about it).
 * Keeps at most max_diags diagnostics (<= 0: CS_VERIFY_MAX_DIAGS). On success stores a new result
 * in *out (caller frees with cs_verify_result_free) and returns 0; returns CS_ERR_NOMEM when memory
 * runs out. A schedule of N steps needs about 60 N bytes plus its buffers. */
int cs_verify_check(const struct cs_sched *sched, int max_diags, struct cs_verify_result **out);

void cs_verify_result_free(struct cs_verify_result *res);

#endif
