/* fuzz_sched.c: libFuzzer target for the MSCCL schedule reader, then the verifier and the plan. */
#include <stddef.h>
#include <stdint.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cs_sched *sched = NULL;
    struct cs_verify_result *res = NULL;
    struct cs_error err;

    cs_error_init(&err);
    if (cs_sched_read_xml_mem((const char *)data, size, "fuzz.xml", &sched, &err) != 0)
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
