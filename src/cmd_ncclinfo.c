/* cmd_ncclinfo.c: `collsim nccl-log`: what an NCCL INFO log says, as a table. */
#include <stdio.h>

#include "cmd.h"
#include "ncclinfo.h"

const char cmd_nccl_log_usage[] =
    "usage: collsim nccl-log FILE\n"
    "\n"
    "Print what collsim reads in an NCCL_DEBUG=INFO log (FILE, or - for stdin), each field\n"
    "with the line it comes from: NCCL's version, the communicator's ranks, nodes and local\n"
    "ranks, the GPU nccl-tests' banner names, the collective channels, the network and the\n"
    "NICs NCCL lists, the NET devices the connections use, how many connections go over each\n"
    "transport (P2P write or read, SHM, the network with GPUDirect RDMA or through the host,\n"
    "CollNet/NVLS), whether NVLS is available, the nccl-tests table and the lines of other\n"
    "communicators that were skipped; then each ring's rank order, each rank's host, CUDA\n"
    "device, bus id, GPU, NET devices and CPU affinity, and each rank's tree per channel.\n"
    "Lines may carry what launchers put before them (Open MPI's --tag-output [1,0]<stdout>:,\n"
    "srun --label's 0: ). The first communicator is read (the first rank count of a\n"
    "`comm ... nRanks` line, else of nccl-tests' banner, else of the first ring).\n"
    "predict, validate and calibrate take such a log for NCCL's schedule (gen nccl:log=FILE:\n"
    "its channels and ring orders) and `collsim platform from` for the machine.\n"
    "Exit status: 0, or 2 when FILE cannot be read or holds no NCCL line.\n";

int cmd_nccl_log(int argc, char **argv)
{
    struct cs_ncclinfo *log;
    struct cs_error err;
    int rc;

    if (argc != 2)
        return cmd_usage_error("nccl-log takes one FILE; see 'collsim help nccl-log'");
    cs_error_init(&err);
    if (cs_ncclinfo_read(argv[1], &log, &err) != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    rc = cs_ncclinfo_write_table(log, stdout) == 0 ? CS_EXIT_OK : CS_EXIT_USAGE;
    cs_ncclinfo_free(log);
    return rc;
}
