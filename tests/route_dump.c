/* route_dump.c: print what SimGrid makes of a platform's network, for comparing two ways of
 * writing the same platform: every link (bandwidth, latency, shared or not) and the route of
 * every ordered pair of GPU hosts, link by link. Usage: route_dump PLATFORM [--cfg=...]. */
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/dynar.h>
#include <xbt/log.h>
#include <xbt/sysdep.h>

static int by_name(const void *a, const void *b)
{
    return strcmp(sg_link_get_name(*(const sg_link_t *)a), sg_link_get_name(*(const sg_link_t *)b));
}

int main(int argc, char **argv)
{
    int nl, n = 0;
    sg_link_t *links;
    sg_host_t *hosts;
    xbt_dynar_t route;

    if (argc < 2) {
        fprintf(stderr, "usage: route_dump PLATFORM\n");
        return 2;
    }
    simgrid_init(&argc, argv);
    xbt_log_control_set("root.thresh:critical");
    simgrid_load_platform(argv[1]);
    simgrid_run_until(0.0); /* seal: routes computed at load (Floyd) exist from here */
    nl = (int)sg_link_count();
    links = sg_link_list();
    qsort(links, (size_t)nl, sizeof(*links), by_name);
    for (int i = 0; i < nl; i++)
        printf("link %s %.17g Bps %.17g s %s\n", sg_link_get_name(links[i]),
               sg_link_get_bandwidth(links[i]), sg_link_get_latency(links[i]),
               sg_link_is_shared(links[i]) ? "shared" : "fatpipe");
    xbt_free(links);
    /* GPU hosts gpu0..gpuN-1, in index order */
    while (n < (int)sg_host_count()) {
        char name[32];

        snprintf(name, sizeof(name), "gpu%d", n);
        if (sg_host_by_name(name) == NULL)
            break;
        n++;
    }
    hosts = calloc((size_t)n + 1, sizeof(*hosts));
    for (int g = 0; g < n; g++) {
        char name[32];

        snprintf(name, sizeof(name), "gpu%d", g);
        hosts[g] = sg_host_by_name(name);
    }
    route = xbt_dynar_new(sizeof(sg_link_t), NULL);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            if (a == b)
                continue;
            xbt_dynar_reset(route);
            sg_host_get_route(hosts[a], hosts[b], route);
            printf("route gpu%d gpu%d:", a, b);
            for (unsigned long i = 0; i < xbt_dynar_length(route); i++)
                printf(" %s", sg_link_get_name(xbt_dynar_get_as(route, i, sg_link_t)));
            printf("\n");
        }
    xbt_dynar_free(&route);
    free(hosts);
    printf("gpus %d\n", n);
    return 0;
}
