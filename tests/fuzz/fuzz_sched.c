/* fuzz_sched.c: libFuzzer target for the MSCCL schedule reader, then the verifier and the plan.
 * The reader runs twice, from memory and as a stream, which must agree (verdict, message, and the
 * schedule written back); the executor's tokenizer rules, checked on the stream's pieces, must
 * agree with the same rules checked on the whole text at once. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "plan.h"
#include "sched.h"
#include "verify.h"
#include "xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Build and free the plan of a few buffer sizes, with the schedule's own protocol and with each
 * other one, as predict would; sizes are rounded to what the executor accepts. The only call
 * into the plan module, so an API change touches this function alone. */
static void plan_sizes(const struct cs_sched *sched)
{
    static const long long sizes[] = {4096, 1 << 20};
    static const enum cs_proto protos[] = {0, CS_PROTO_LL, CS_PROTO_LL128, CS_PROTO_SIMPLE};

    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (size_t j = 0; j < sizeof(protos) / sizeof(protos[0]); j++) {
            long long bytes = cs_plan_round_size(sched, sizes[i], 4);
            struct cs_plan *plan = NULL;
            struct cs_error err;

            cs_error_init(&err);
            if (cs_plan_build(sched, bytes, 4, protos[j], &plan, &err) == 0)
                cs_plan_free(plan);
        }
}

/* The tokenizer rules over the whole text at once, as verify checked them before it streamed:
 * the reference the streaming scanner must match. */
static void tokens_whole(const char *t, size_t len, struct cs_verify_tokens *out)
{
    const char *end = t + len;
    int line = 1, in_tag = 0;

    cs_verify_tokens_init(out);
    for (const char *p = t; p < end; p++) {
        int rule = -1;

        if (*p == '\n')
            line++;
        if (!in_tag && end - p >= 4 && strncmp(p, "<!--", 4) == 0) {
            for (p += 4; p + 2 < end && strncmp(p, "-->", 3) != 0; p++)
                line += *p == '\n';
            p += 2;
            continue;
        }
        if (*p == '<' && !in_tag) {
            in_tag = 1;
            rule = p + 1 < end && p[1] == '?' ? 0 : -1;
        } else if (*p == '>') {
            in_tag = 0;
        } else if (in_tag && *p == '\t') {
            rule = 1;
        } else if (in_tag && *p == '=') {
            const char *q = p + 1;

            while (q < end && *q == ' ')
                q++;
            rule = q < end && *q == '\'' ? 2 : -1;
        }
        if (rule < 0 || out->seen[rule]++)
            continue;
        out->rule[out->n] = rule;
        out->at[out->n++] = line;
    }
}

static void tap_tokens(void *ctx, const char *piece, size_t n)
{
    cs_verify_tokens_feed(ctx, piece, n);
}

static char *written(const struct cs_sched *s, size_t *len)
{
    char *buf = NULL;
    FILE *fp = open_memstream(&buf, len);

    if (fp == NULL)
        abort();
    cs_sched_write_xml(s, fp);
    fclose(fp);
    return buf;
}

/* Read data as a stream too: the same verdict, message and schedule as from memory. */
static void stream_agrees(const uint8_t *data, size_t size, int rc, const struct cs_error *err,
                          const struct cs_sched *sched)
{
    struct cs_verify_tokens streamed, whole;
    struct cs_sched *s2 = NULL;
    struct cs_error e2;
    FILE *fp;
    int rc2;

    if (size == 0 || (fp = fmemopen((void *)data, size, "rb")) == NULL)
        return;
    cs_error_init(&e2);
    cs_verify_tokens_init(&streamed);
    rc2 = cs_sched_read_xml_stream(fp, "fuzz.xml", CS_SCHED_MAX_BYTES, tap_tokens, &streamed, &s2,
                                   &e2);
    fclose(fp);
    if (rc2 != rc || (rc != 0 && (e2.line != err->line || strcmp(e2.msg, err->msg) != 0)))
        abort();
    if (rc == 0) {
        size_t n1, n2;
        char *a = written(sched, &n1), *b = written(s2, &n2);

        if (n1 != n2 || memcmp(a, b, n1) != 0)
            abort();
        free(a);
        free(b);
        /* A document that parsed was streamed whole: the rules agree with the whole text's. */
        tokens_whole((const char *)data, size, &whole);
        if (streamed.n != whole.n)
            abort();
        for (int k = 0; k < whole.n; k++)
            if (streamed.rule[k] != whole.rule[k] || streamed.at[k] != whole.at[k])
                abort();
        cs_sched_free(s2);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cs_sched *sched = NULL;
    struct cs_verify_result *res = NULL;
    struct cs_error err;
    int rc;

    cs_error_init(&err);
    rc = cs_sched_read_xml_mem((const char *)data, size, "fuzz.xml", &sched, &err);
    stream_agrees(data, size, rc, &err, sched);
    if (rc != 0)
        return 0;
    /* The reader leaves validity to verify; like predict, plan only what verify finds valid. */
    if (cs_verify_check(sched, 16, &res) == 0) {
        if (res->verdict != CS_VERIFY_INVALID)
            plan_sizes(sched);
        cs_verify_result_free(res);
    }
    cs_sched_free(sched);
    return 0;
}
