/* verify.h: check a schedule: its structure (connections, limits, deadlock-free dependencies) and
 * its data result (a symbolic execution of chunks, like msccl-tools Check()). */
#ifndef CS_VERIFY_H
#define CS_VERIFY_H

#include <stddef.h>

#include "error.h"
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
    /* the kinds of data errors, each a subset of ndata_errors: */
    long nwrong_outputs; /* output chunks whose final value is wrong */
    long nraces;         /* pairs of unordered steps on one chunk, one of them writing */
    long norder_outputs; /* output chunks whose value depends on the order of execution */
    long nbad_accesses; /* steps reading unwritten chunks or chunks outside the runtime's buffers */
    int ndiags;         /* kept diagnostics, in the order found */
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

/* Co-residency. The runtime launches every threadblock of a GPU as one grid and they spin on
 * each other's flags, but nothing checks that they fit on the GPU at once (runtime-audit.md
 * section 0 row 2; msccl.md 2.4). The executor's kernel is built with -maxrregcount=96 (executor
 * makefiles/common.mk:70) and launched with 544 (Simple) or 640 (LL, LL128) threads
 * (msccl_setup.cc:457-465); ptxas gives it 96 registers, and 640 x 96 = 61,440 of an SM's 65,536
 * registers: one CTA per SM. An A100 has 108 SMs (nccl-a100.md 2); H100 SXM and H200 132. The
 * defaults of cs.gpu_sms and cs.ctas_per_sm (params.h). */
#define CS_VERIFY_GPU_SMS 108
#define CS_VERIFY_CTAS_PER_SM 1

/* The executor's tokenizer (msccl_parser.h) reads double-quoted values separated by spaces and no
 * <?xml?> declaration: the first line that breaks each rule, found as the file's bytes stream
 * past (cs_verify_tokens_feed), outside comments. */
struct cs_verify_tokens {
    int line, in_tag, in_comment;
    int open;     /* characters of "<!--" matched at the start of a tag */
    int dashes;   /* '-' in a row inside a comment */
    int after_lt; /* the last character was a '<' that opened a tag */
    int eq_line;  /* > 0: inside a tag after '=' and spaces, on this line */
    int seen[3];  /* rules broken: <?xml?>, a tab in a tag, a single-quoted value */
    int n;        /* rules broken, in the order found: */
    int rule[3], at[3];
};

void cs_verify_tokens_init(struct cs_verify_tokens *t);
void cs_verify_tokens_feed(struct cs_verify_tokens *t, const char *piece, size_t n);

struct cs_verify_opts {
    int max_diags; /* <= 0: CS_VERIFY_MAX_DIAGS */
    enum cs_verify_runtime runtime;
    const struct cs_verify_tokens *tokens; /* the file's, for the runtime's tokenizer rules; NULL:
                                            * not checked */
    int gpu_sms;     /* SMs per GPU; 0: CS_VERIFY_GPU_SMS; < 0: co-residency not checked */
    int ctas_per_sm; /* threadblocks co-resident per SM; <= 0: CS_VERIFY_CTAS_PER_SM */
    /* The communicator's channels (comm->nChannels), 1..32; 0: not checked. The executor's
     * internal scheduler raises a communicator's channels to the largest nchannels it loads
     * (msccl.md 1.2), so this matters where the channels are fixed. */
    int comm_channels;
    int structure_only; /* skip the symbolic data check (the result's data_checked stays 0) */
};

/* "executor" or "legacy"; 0 (CS_VERIFY_ANY) for anything else. */
enum cs_verify_runtime cs_verify_runtime_parse(const char *name);

/* cs_verify_check, plus what the chosen runtime loads and refuses: required <algo> attributes,
 * collective names, steps and threadblocks against its limits, nodes per rank, and (with tokens)
 * its tokenizer's rules. Those are structural errors, and so is a GPU with more threadblocks than
 * opts' SMs x CTAs per SM keep resident (cs_verify_find_overfull), whatever the runtime. */
int cs_verify_check_opts(const struct cs_sched *sched, const struct cs_verify_opts *opts,
                         struct cs_verify_result **out);

/* Check `sched` (which may come from the XML reader or a generator: nothing is assumed about it).
 * Keeps at most max_diags diagnostics (<= 0: CS_VERIFY_MAX_DIAGS). On success stores a new result
 * in *out (caller frees with cs_verify_result_free) and returns 0; returns CS_ERR_NOMEM when memory
 * runs out. Beyond the schedule, the structural checks hold about 45 bytes a step; the symbolic
 * data check then keeps 16 of those and adds 12 a step, 16 a buffer chunk, 25 more an output
 * chunk and 28 a reduction (a ring AllReduce: about 65 bytes a step in all). */
int cs_verify_check(const struct cs_sched *sched, int max_diags, struct cs_verify_result **out);

void cs_verify_result_free(struct cs_verify_result *res);

/* Add a finding made outside the checker (LL128 on a route that is not NVLink needs the platform
 * and a replay) to res, counted and kept like the checker's own (msg is copied), and update the
 * verdict. 0 or CS_ERR_NOMEM (res unchanged). */
int cs_verify_result_add(struct cs_verify_result *res, enum cs_verify_severity severity,
                         enum cs_verify_class cls, int line, const char *msg);

/* The verdict of a result that is not OK in words, with the kinds of its errors: "64 data errors
 * (64 wrong output chunks)", "3 structural errors (and data errors)". Returns buf. */
const char *cs_verify_summary(const struct cs_verify_result *res, char *buf, size_t len);

/* The first GPU, in id order from index `from` of sched->gpus on, with more threadblocks than a
 * GPU of gpu_sms SMs keeps resident at ctas_per_sm CTAs per SM (both at least 1), or -1 when every
 * one fits. The runtime hangs on such a GPU: its threadblocks wait on each other, and those that
 * find no SM start only when a resident one finishes. That a resident one could finish without
 * them is not checked: CUDA promises no dispatch order. When a GPU is found, msg (len > 0) says
 * "gpu G has N threadblocks; at most R are co-resident on this GPU (S SMs x C CTA per SM): the
 * runtime would hang". */
int cs_verify_find_overfull(const struct cs_sched *sched, int from, int gpu_sms, int ctas_per_sm,
                            char *msg, size_t len);

/* Refuse (CS_ERR_INVALID, err at name:line) a schedule that verify finds structurally invalid
 * for another reason than a deadlock or too many threadblocks: what the executor refuses, so
 * that nothing plans or times it (predict, the harness). The reader takes any well-formed
 * schedule; this is the check before planning it. CS_ERR_NOMEM when out of memory. */
int cs_verify_refuse_invalid(const struct cs_sched *s, const char *name, struct cs_error *err);

/* cs_verify_refuse_invalid, but with what_if set a tb over the runtimes' steps per threadblock
 * passes (verify reports it), for predict to simulate it as a what-if. Structural checks only:
 * the symbolic data check, whose findings refuse nothing here, is not run. */
int cs_verify_refuse_invalid_steps(const struct cs_sched *s, const char *name, int what_if,
                                   struct cs_error *err);

/* cs_verify_refuse_invalid_steps, then the symbolic data check too (predict --verify): a schedule
 * whose data result is wrong is refused as well (CS_ERR_INVALID, err at the first data error's
 * name:line). */
int cs_verify_refuse_wrong(const struct cs_sched *s, const char *name, int what_if,
                           struct cs_error *err);

#endif
