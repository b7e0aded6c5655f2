/* sgrate.h: a host-to-host transfer with a rate bound, for the replay (C++ behind a C call). */
#ifndef CS_SGRATE_H
#define CS_SGRATE_H

#include <simgrid/forward.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Move bytes from one host to another and wait: the transfer shares the route's links max-min
 * with every other one, never faster than rate_Bps (0: no bound of its own). */
void cs_sg_sendto(sg_host_t from, sg_host_t to, double bytes, double rate_Bps);

#ifdef __cplusplus
}
#endif

#endif
