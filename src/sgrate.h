/* sgrate.h: what the replay needs from SimGrid's C++ API behind C calls: a host-to-host transfer
 * with a rate bound, and loading a platform without letting an exception escape. */
#ifndef CS_SGRATE_H
#define CS_SGRATE_H

#include <simgrid/forward.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Move bytes from one host to another and wait: the transfer shares the route's links max-min
 * with every other one, never faster than rate_Bps (0: no bound of its own). */
void cs_sg_sendto(sg_host_t from, sg_host_t to, double bytes, double rate_Bps);

/* simgrid_load_platform(path) with SimGrid's exceptions caught (a parse error, a missing file, a
 * link or host declared twice): 0, or -1 with SimGrid's message in msg. */
int cs_sg_load_platform(const char *path, char *msg, size_t len);

#ifdef __cplusplus
}
#endif

#endif
