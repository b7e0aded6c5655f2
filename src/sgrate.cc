/* sgrate.cc: a rate-bounded host-to-host transfer for the replay, and a platform load whose
 * exceptions stay in C++. SimGrid 3.32 has no C binding for a comm's rate bound, and its C++
 * Comm::set_rate is not passed on to host-to-host comms (sendto_init): the bound is set on the
 * kernel activity, whose header 3.32 does not install. */
#include "sgrate.h"

#include <cstdio>
#include <exception>
#include <simgrid/engine.h>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Host.hpp>

/* simgrid::kernel::activity::CommImpl::set_rate(double), exported by libsimgrid 3.32: a
 * non-virtual member function, called with the activity as its first argument (Itanium C++
 * ABI). tests/check_replay.c test_rate_cap fails if a SimGrid release drops or ignores it. */
extern "C" void* cs_sg_commimpl_set_rate(void* comm, double rate)
    __asm__("_ZN7simgrid6kernel8activity8CommImpl8set_rateEd");

extern "C" void cs_sg_sendto(sg_host_t from, sg_host_t to, double bytes, double rate_Bps)
{
    simgrid::s4u::CommPtr c = simgrid::s4u::Comm::sendto_init();

    c->set_payload_size(static_cast<uint64_t>(bytes));
    if (rate_Bps > 0)
        cs_sg_commimpl_set_rate(c->get_impl(), rate_Bps);
    c->set_source(from);
    c->set_destination(to);
    c->wait();
}

extern "C" int cs_sg_load_platform(const char* path, char* msg, size_t len)
{
    /* SimGrid reports a bad platform by throwing (simgrid::ParseError, std::invalid_argument for a
     * missing file, ...): a C caller cannot catch it, and uncaught it aborts the process. */
    try {
        simgrid_load_platform(path);
    } catch (const std::exception& e) {
        std::snprintf(msg, len, "%s", e.what());
        return -1;
    } catch (...) {
        std::snprintf(msg, len, "an unknown exception");
        return -1;
    }
    return 0;
}
