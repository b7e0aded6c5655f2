/* timeline.c: the replay's event log: growth under a cap, links and routes, pipe serialisation. */
#include "timeline.h"

#include "fdio.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cs_timeline_init(struct cs_timeline *tl, long long max_events)
{
    memset(tl, 0, sizeof(*tl));
    tl->max_events = max_events > 0 ? max_events : CS_TL_DEFAULT_MAX_EVENTS;
}

void cs_timeline_cleanup(struct cs_timeline *tl)
{
    if (tl == NULL)
        return;
    cs_free_each(4, tl->events, tl->links, tl->conns, tl->route);
    cs_timeline_init(tl, tl->max_events);
}

int cs_timeline_add(struct cs_timeline *tl, const struct cs_tl_event *ev)
{
    if (tl->truncated)
        return -1;
    if (tl->nevents >= tl->max_events) {
        tl->truncated = 1;
        return -1;
    }
    if (tl->nevents == tl->cap) {
        long long nc = tl->cap ? 2 * tl->cap : 4096;
        struct cs_tl_event *ne;

        if (nc > tl->max_events)
            nc = tl->max_events;
        ne = realloc(tl->events, (size_t)nc * sizeof(*ne));
        if (ne == NULL) {
            tl->truncated = 1;
            return -1;
        }
        tl->events = ne;
        tl->cap = nc;
    }
    tl->events[tl->nevents++] = *ev;
    return 0;
}

int cs_timeline_add_link(struct cs_timeline *tl, const char *name, double bw_Bps)
{
    struct cs_tl_link *nl = realloc(tl->links, (size_t)(tl->nlinks + 1) * sizeof(*nl));

    if (nl == NULL)
        return -1;
    tl->links = nl;
    memset(&nl[tl->nlinks], 0, sizeof(*nl));
    snprintf(nl[tl->nlinks].name, sizeof(nl[tl->nlinks].name), "%s", name);
    nl[tl->nlinks].bw_Bps = bw_Bps;
    return tl->nlinks++;
}

int cs_timeline_add_conn(struct cs_timeline *tl, const struct cs_tl_conn *c, const int *links,
                         int n)
{
    struct cs_tl_conn *nc = realloc(tl->conns, (size_t)(tl->nconns + 1) * sizeof(*nc));
    int *nr;

    if (nc == NULL)
        return -1;
    tl->conns = nc;
    nr = realloc(tl->route, (size_t)(tl->nroute + n + 1) * sizeof(*nr));
    if (nr == NULL)
        return -1;
    tl->route = nr;
    nc[tl->nconns] = *c;
    nc[tl->nconns].route0 = tl->nroute;
    nc[tl->nconns].nroute = n;
    memcpy(nr + tl->nroute, links, (size_t)n * sizeof(*nr));
    tl->nroute += n;
    return tl->nconns++;
}

/* The fixed part of the stream: the struct with its pointers zeroed. */
int cs_timeline_write(int fd, const struct cs_timeline *tl)
{
    struct cs_timeline h = *tl;

    h.events = NULL;
    h.links = NULL;
    h.conns = NULL;
    h.route = NULL;
    h.cap = h.nevents;
    if (cs_fd_write_all(fd, &h, sizeof(h)) != 0 ||
        cs_fd_write_all(fd, tl->events, (size_t)tl->nevents * sizeof(*tl->events)) != 0 ||
        cs_fd_write_all(fd, tl->links, (size_t)tl->nlinks * sizeof(*tl->links)) != 0 ||
        cs_fd_write_all(fd, tl->conns, (size_t)tl->nconns * sizeof(*tl->conns)) != 0 ||
        cs_fd_write_all(fd, tl->route, (size_t)tl->nroute * sizeof(*tl->route)) != 0)
        return -1;
    return 0;
}

int cs_timeline_read(int fd, struct cs_timeline *tl)
{
    struct cs_timeline h;
    int ok;

    if (cs_fd_read_all(fd, &h, sizeof(h)) != 0 || h.nevents < 0 || h.nevents > h.max_events ||
        h.nlinks < 0 || h.nconns < 0 || h.nroute < 0)
        return -1;
    cs_timeline_cleanup(tl);
    h.events = malloc((size_t)h.nevents * sizeof(*h.events) + 1);
    h.links = malloc((size_t)h.nlinks * sizeof(*h.links) + 1);
    h.conns = malloc((size_t)h.nconns * sizeof(*h.conns) + 1);
    h.route = malloc((size_t)h.nroute * sizeof(*h.route) + 1);
    ok = h.events != NULL && h.links != NULL && h.conns != NULL && h.route != NULL &&
         cs_fd_read_all(fd, h.events, (size_t)h.nevents * sizeof(*h.events)) == 0 &&
         cs_fd_read_all(fd, h.links, (size_t)h.nlinks * sizeof(*h.links)) == 0 &&
         cs_fd_read_all(fd, h.conns, (size_t)h.nconns * sizeof(*h.conns)) == 0 &&
         cs_fd_read_all(fd, h.route, (size_t)h.nroute * sizeof(*h.route)) == 0;
    for (int i = 0; ok && i < h.nconns; i++)
        ok = h.conns[i].route0 >= 0 && h.conns[i].nroute >= 0 &&
             h.conns[i].route0 + h.conns[i].nroute <= h.nroute;
    if (!ok) {
        cs_timeline_cleanup(&h); /* frees the arrays read so far */
        return -1;
    }
    h.cap = h.nevents;
    *tl = h;
    return 0;
}
