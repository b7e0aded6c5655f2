/* timeline.h: the event log of one replay (what each threadblock did and waited for, and when,
 * plus the links of every connection's route), plain C so that traces and statistics are built
 * and tested without SimGrid. */
#ifndef CS_TIMELINE_H
#define CS_TIMELINE_H

/* Default cap on recorded events (about 80 bytes each in memory). */
#define CS_TL_DEFAULT_MAX_EVENTS 1000000LL

enum cs_tl_kind {
    CS_TL_CALL = 1,    /* a primitive call, or a local op in one iteration: the step's slice */
    CS_TL_OVERHEAD,    /* work: the per-call overhead of a sending call (cs.call_s) */
    CS_TL_UNIT,        /* work: one transfer unit (wire and tb throughput), sent and/or received */
    CS_TL_LOCAL,       /* work: a cpy or a fused re */
    CS_TL_WAIT_DATA,   /* wait for a unit; other = the sending tb */
    CS_TL_WAIT_CREDIT, /* wait for FIFO slots; other = the receiving tb that frees them */
    CS_TL_WAIT_FLAG,   /* wait for a dependency flag; other = the tb that publishes it */
    CS_TL_LATENCY,     /* work of the route: a received unit still in flight for the hop
                        * latency after its sender posted it; other = the sending tb */
    CS_TL_LAUNCH,      /* work: the GPU's kernel starts late, its process launching the GPUs
                        * before it first (cs.launch_gpu_s x its place in the process) */
};

/* Work and waits of one tb tile [0, its end] without gaps or overlaps; CALL events span some of
 * them. Events are stored in the order they end. */
struct cs_tl_event {
    double start_s, end_s; /* simulated seconds from the start of the replay (after launch) */
    double wire_bytes;     /* UNIT that sends: bytes on the wire (protocol lines included) */
    double wire_s;         /* UNIT that sends: seconds the network took for them */
    long long bytes;       /* data bytes of a CALL, UNIT or LOCAL */
    int kind;              /* enum cs_tl_kind */
    int tb;                /* global tb index in the plan */
    int iter, op, call;    /* iteration, op index in the tb, call index (0 for local ops) */
    int other;             /* waits: the tb whose action ended the wait; else -1 */
    int out_conn, out_seq; /* UNIT that sends: connection index, rank of the unit on it; else -1 */
    int in_conn, in_seq;   /* UNIT that receives: likewise; else -1 */
};

struct cs_tl_link {
    char name[64];
    double bw_Bps;
};

/* A directed connection (src GPU to dst GPU on a channel) and the links of its route. */
struct cs_tl_conn {
    int src, dst, chan;
    int sender, receiver; /* global tb indices, or -1 */
    int route0, nroute;   /* its links: route[route0 .. route0 + nroute) */
};

struct cs_timeline {
    long long max_events; /* recording stops (truncated = 1) beyond this many events */
    int truncated;
    long long nevents, cap;
    struct cs_tl_event *events;
    int nlinks, nconns, nroute;
    struct cs_tl_link *links;
    struct cs_tl_conn *conns;
    int *route;        /* link indices */
    double makespan_s; /* simulated end of the replay */
    double offset_s;   /* launch + deploy, before the replay's time 0 */
    int complete;      /* every tb finished (no deadlock) */
};

/* An empty log that will keep at most max_events events (<= 0: CS_TL_DEFAULT_MAX_EVENTS). */
void cs_timeline_init(struct cs_timeline *tl, long long max_events);
void cs_timeline_cleanup(struct cs_timeline *tl);

/* Append a copy of ev: 0, or -1 (and truncated set) when the cap is reached or memory is out. */
int cs_timeline_add(struct cs_timeline *tl, const struct cs_tl_event *ev);

/* Add a link (name truncated to 63 bytes); returns its index or -1 when out of memory. */
int cs_timeline_add_link(struct cs_timeline *tl, const char *name, double bw_Bps);

/* Add a connection with its route (n link indices); returns its index or -1. */
int cs_timeline_add_conn(struct cs_timeline *tl, const struct cs_tl_conn *c, const int *links,
                         int n);

/* Serialise to / from a file descriptor (the replay's pipe). read replaces the contents of an
 * initialised tl. 0, or -1 on an I/O error or a malformed stream. */
int cs_timeline_write(int fd, const struct cs_timeline *tl);
int cs_timeline_read(int fd, struct cs_timeline *tl);

#endif
