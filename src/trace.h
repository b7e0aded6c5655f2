/* trace.h: a replay's timeline as a Chrome / Perfetto trace (Trace Event Format JSON). */
#ifndef CS_TRACE_H
#define CS_TRACE_H

#include <stdio.h>

#include "plan.h"
#include "timeline.h"

/* Write tl (recorded by replaying plan) to fp: a process per GPU ("gpu N") with a thread per
 * threadblock ("tb T (send p, recv q, chan c)"), a complete slice per primitive call or local op
 * (name: the step type; args: peers, bytes, iteration, step, call) with its parts nested
 * ("wait data|credit|flag", "call overhead", "send unit", "recv unit", "recv+send unit"; flag
 * waits come before the call), a flow arrow from every sent unit to its receipt, and a
 * "collective" process holding the launch slice and a utilisation counter per link (share of
 * its bandwidth in use; a transfer counts at its average rate). Timestamps are microseconds of
 * simulated time from the launch. Returns 0, CS_ERR_USAGE for a truncated timeline, or CS_ERR_IO
 * when writing fails. */
int cs_trace_write(FILE *fp, const struct cs_plan *plan, const struct cs_timeline *tl);

/* s as a JSON string literal, quotes and escapes included (tracecmp's traces use it too). */
void cs_trace_json_str(FILE *fp, const char *s);

#endif
