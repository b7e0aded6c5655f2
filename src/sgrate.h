/* sgrate.h: what the replay needs from SimGrid's C++ API behind C calls: host-to-host transfers
 * with a rate bound that report their end, timers, and loading a platform without letting an
 * exception escape. */
#ifndef CS_SGRATE_H
#define CS_SGRATE_H

#include <simgrid/forward.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A transfer in flight (a SimGrid comm). */
struct cs_sg_transfer;

/* Callbacks given to cs_sg_on_transfer_end and cs_sg_timer_at run in SimGrid's kernel (maestro),
 * between two rounds of the actors: they must not block; they may release a semaphore, which
 * SimGrid then does at once. */

/* Call cb(tag) whenever a transfer started by cs_sg_transfer_start ends (the last call wins). */
void cs_sg_on_transfer_end(void (*cb)(int tag));

/* Start moving bytes from one host to another without waiting (an actor's call): the transfer
 * shares the route's links max-min with every other one, never faster than rate_Bps (0: no bound
 * of its own). Returns the transfer, which the caller releases with cs_sg_transfer_free once it
 * has ended; the end is reported with tag. */
struct cs_sg_transfer *cs_sg_transfer_start(sg_host_t from, sg_host_t to, double bytes,
                                            double rate_Bps, int tag);
void cs_sg_transfer_free(struct cs_sg_transfer *t);

/* How many transfers this process started as plain comms (SimGrid 3.32 detaches host-to-host
 * comms, whose end then costs a walk of every detached comm in flight; sgrate.cc undoes that
 * where it knows the layout). */
long long cs_sg_transfers_undetached(void);

/* Call cb(tag) at simulated date_s (now or later). */
void cs_sg_timer_at(double date_s, int tag, void (*cb)(int tag));

/* simgrid_load_platform(path) with SimGrid's exceptions caught (a parse error, a missing file, a
 * link or host declared twice): 0, or -1 with SimGrid's message in msg. */
int cs_sg_load_platform(const char *path, char *msg, size_t len);

#ifdef __cplusplus
}
#endif

#endif
