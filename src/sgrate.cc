/* sgrate.cc: what the replay needs from SimGrid's C++ side: rate-bounded host-to-host transfers
 * that say when they end, timers, and a platform load whose exceptions stay in C++. SimGrid 3.32
 * has no C binding for a comm's rate bound, and its C++ Comm::set_rate is not passed on to
 * host-to-host comms (sendto_init): the bound is set on the kernel activity, whose header 3.32
 * does not install, as is the kernel's signal of a comm's end. */
#include "sgrate.h"

#include <cstdio>
#include <exception>
#include <list>
#include <simgrid/engine.h>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/version.h>
#include <unordered_map>
#include <xbt/signal.hpp>

/* simgrid::kernel::activity::CommImpl::set_rate(double), exported by libsimgrid 3.32: a
 * non-virtual member function, called with the activity as its first argument (Itanium C++
 * ABI). tests/check_replay.c test_rate_cap fails if a SimGrid release drops or ignores it. */
extern "C" void* cs_sg_commimpl_set_rate(void* comm, double rate)
    __asm__("_ZN7simgrid6kernel8activity8CommImpl8set_rateEd");

/* simgrid::kernel::activity::CommImpl::on_completion, fired by the kernel (in maestro) when a
 * comm ends, before anyone waiting on it is answered. */
extern simgrid::xbt::signal<void(simgrid::kernel::activity::CommImpl const&)> cs_sg_commimpl_end
    __asm__("_ZN7simgrid6kernel8activity8CommImpl13on_completionE");

namespace {
/* SimGrid 3.32's sendto_init detaches the comm (CommImpl::detach: detached_ = true, and a
 * reference appended to maestro's list of activities), and the kernel takes a detached comm off
 * that list when it ends by walking the list: a cost proportional to the transfers in flight,
 * paid by each (half the replay's time at 64 GPUs). A comm that is not detached ends the same way
 * without the walk, and its last reference, the replay's, frees it. undetach undoes the detach
 * where the layout is 3.32's (the class headers are not installed): the comm's flag and the
 * list's last element are checked before anything is written; otherwise the comm stays as it is. */
using ActivityList = std::list<simgrid::kernel::activity::ActivityImplPtr>;
constexpr size_t kMaestroOffset   = 0x1d0; /* EngineImpl::maestro_ (ActorImpl*) */
constexpr size_t kActivitiesOffset = 0xc0; /* ActorImpl::activities_ */
constexpr size_t kDetachedOffset   = 0xc0; /* CommImpl::detached_ (bool) */
int undetach_layout = -1;                  /* 1: SimGrid 3.32, whose layout this is; 0: other */
long long nundetached;

void undetach(simgrid::kernel::activity::ActivityImpl* impl)
{
    if (undetach_layout < 0) {
        int major, minor, patch;

        sg_version_get(&major, &minor, &patch);
        undetach_layout = major == 3 && minor == 32;
    }
    if (undetach_layout == 0)
        return;
    char* engine   = reinterpret_cast<char*>(simgrid::s4u::Engine::get_instance()->get_impl());
    char* maestro  = *reinterpret_cast<char**>(engine + kMaestroOffset);
    auto* detached = reinterpret_cast<bool*>(reinterpret_cast<char*>(impl) + kDetachedOffset);
    if (maestro == nullptr || not *detached)
        return;
    auto* list = reinterpret_cast<ActivityList*>(maestro + kActivitiesOffset);
    if (list->empty() || list->back().get() != impl)
        return;
    list->pop_back();
    *detached = false;
    nundetached++;
}

/* The transfers in flight, by kernel activity, with their tags. */
std::unordered_map<const void*, int> in_flight;
void (*end_cb)(int)      = nullptr;
bool end_connected       = false;

void on_comm_end(simgrid::kernel::activity::CommImpl const& impl)
{
    auto it = in_flight.find(static_cast<const void*>(&impl));

    if (it == in_flight.end())
        return;
    int tag = it->second;
    in_flight.erase(it);
    end_cb(tag);
}
} // namespace

extern "C" void cs_sg_on_transfer_end(void (*cb)(int tag))
{
    end_cb = cb;
    if (not end_connected)
        cs_sg_commimpl_end.connect(on_comm_end);
    end_connected = true;
}

extern "C" struct cs_sg_transfer* cs_sg_transfer_start(sg_host_t from, sg_host_t to, double bytes,
                                                       double rate_Bps, int tag)
{
    simgrid::s4u::CommPtr c = simgrid::s4u::Comm::sendto_init();

    undetach(c->get_impl());
    c->set_payload_size(static_cast<uint64_t>(bytes));
    if (rate_Bps > 0)
        cs_sg_commimpl_set_rate(c->get_impl(), rate_Bps);
    in_flight[static_cast<const void*>(c->get_impl())] = tag;
    c->set_source(from);
    c->set_destination(to); /* which starts it, the source being set */
    if (c->get_state() == simgrid::s4u::Activity::State::INITED)
        c->start();
    /* The caller's reference, dropped by cs_sg_transfer_free. */
    intrusive_ptr_add_ref(c.get());
    return reinterpret_cast<struct cs_sg_transfer*>(c.get());
}

extern "C" long long cs_sg_transfers_undetached(void)
{
    return nundetached;
}

extern "C" void cs_sg_transfer_free(struct cs_sg_transfer* t)
{
    if (t != nullptr)
        intrusive_ptr_release(reinterpret_cast<simgrid::s4u::Comm*>(t));
}

extern "C" void cs_sg_timer_at(double date_s, int tag, void (*cb)(int tag))
{
    simgrid::kernel::timer::Timer::set(date_s, [cb, tag]() { cb(tag); });
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
