/* cmd_calibrate.h: `collsim calibrate platform` (cmd_calibrate_platform.c), which `collsim
 * calibrate` (cmd_calibrate.c) dispatches to, and its usage text, which ends calibrate's help. */
#ifndef CS_CMD_CALIBRATE_H
#define CS_CMD_CALIBRATE_H

int cmd_calibrate_platform(int argc, char **argv);

#define CS_CALIBRATE_PLATFORM_USAGE                                                                \
    "usage: collsim calibrate platform --family F (TABLE... | --cases FILE) -o PLATFORM.xml\n"     \
    "           [--props FILE] [--report FILE] [--held-out TABLE]... [--nodes N] [--gpu G]\n"      \
    "           [--nic NIC] [--nic-socket same|other] [--schedule FILE | --gen SPEC]\n"            \
    "           [--protocols LIST|nccl] [--nccl VERSION] [--channels N] [--collective C]\n"        \
    "           [--ranks N] [--params FILE]... [--set KEY=VALUE]... [--fit KEY]...\n"              \
    "           [--fix KEY]... [--max-iter N] [--jobs N] [--validate FILE] [--quiet]\n"            \
    "\n"                                                                                           \
    "Fit a family's platform to measured tables through the model, and write it. Each TABLE\n"     \
    "(a measurement table or raw nccl-tests output, as `calibrate fit` reads them) is one case:\n" \
    "by default the schedule NCCL runs, gen:nccl:gpus=N,nodes=M,channels=C (N the table's\n"       \
    "ranks: --ranks, else busbw/algbw, else its gpus column, which must agree; M: --nodes, else\n" \
    "its nodes column, else the family's, and a run that is not the family's machine, as 4\n"      \
    "ranks on 2 DGX nodes, is refused; --nccl, else the table's nccl_version column, else\n"       \
    "2.12.12; --channels, else the family's), each size predicted on NCCL's channels and\n"        \
    "threads at that size, with the protocol NCCL's own tuning model of that version picks\n"      \
    "there (--protocols nccl) when the version is known, else the fastest of LL, LL128 and\n"      \
    "Simple (NCCL's choice then being unknown, the fit finds where each protocol runs);\n"         \
    "--schedule FILE or --gen SPEC with --protocols LIST predicts the fastest of LIST\n"           \
    "instead. An NCCL_DEBUG=INFO log given as a\n"                                                 \
    "TABLE (its nccl-tests table inside) also gives what a user would: the ranks and nodes\n"      \
    "where --ranks and --nodes do not, and the schedule NCCL ran, gen:nccl:log=TABLE (its\n"       \
    "version, channels and ring orders; `collsim nccl-log TABLE` shows what was read), with\n"     \
    "NCCL's own protocol per size. A version is also read from nccl-tests' header\n"               \
    "(nccl-library=22105); NCCL 2.19 and later are taken with 2.18's rule, with a warning.\n"      \
    "--cases FILE takes\n"                                                                         \
    "the cases of a `collsim validate` case file instead (PLATFORM -): one platform fitted to\n"   \
    "several tables of one machine at once (its NCCL run, its MSCCL runs, its -g 8 and mpirun\n"   \
    "runs), each with its own schedule, protocol and set= options (cs.gpus_per_process=8 for\n"    \
    "nccl-tests -g 8). The platform holds the most GPUs any table or case runs on (its ranks,\n"   \
    "or its generator's gpus=): dgx-a100 nodes of 8 and a100-pcie-net servers unless --nodes\n"    \
    "says, that many cards in one a100-pcie-4gpu or a100-pcie-nvbridge machine (4 at least).\n"    \
    "\n"                                                                                           \
    "The keys fitted are every parameter the tables' predictions depend on: the launch (and\n"     \
    "each later launch of a process's GPUs), each link class's hop latency and bandwidth, and\n"   \
    "for each protocol run its per-threadblock rate, pass, per-call cost and share of each\n"      \
    "link (and for MSCCL schedules the local copy and reduce rates and the runtime's own\n"        \
    "costs); --fit KEY adds one, --fix KEY keeps one at its value. A key no size depends on is\n"  \
    "left at its value (insensitive). The rest move together, in ln(value) within their\n"         \
    "physical ranges, to minimise the squared ln(predicted / measured) of every size of every\n"   \
    "table plus one prior term per key (ln(value / prior) over its prior's width), by\n"           \
    "Levenberg-Marquardt on the replay (each iteration predicts every table once per key), then\n" \
    "reweighted towards the largest errors while that lowers the largest (up to 4 rounds);\n"      \
    "--max-iter N (default 30) bounds the iterations of each pass, the first and each round,\n"    \
    "so the report's count of all of them may be more; --jobs N (default the CPUs, at most\n"      \
    "8) predicts that many of an iteration's keys at once. The report gives\n"                     \
    "each key's prior, fitted value and 95% interval, and whether the data identified it\n"        \
    "(their information on it exceeds the prior's), it stayed at its prior, or it is at the\n"     \
    "edge of its range; and the pairs of keys the data cannot tell apart (correlation beyond\n"    \
    "0.95). Priors: src/params.c, --params FILE (props), --set KEY=VALUE.\n"                       \
    "\n"                                                                                           \
    "-o writes the platform; --props the fitted and the given keys as <prop> lines (`collsim\n"    \
    "platform F --params FILE` writes the same platform); --report (- for stdout) a Markdown\n"    \
    "report: the keys, then per table and size the measured and predicted times, the\n"            \
    "protocol, the error, the median and max |error| per size band (<= 64 KiB, 64 KiB - 4 MiB,\n"  \
    "4 MiB and up), and the line `Residual over N of N sizes: median |error| X%, max |error|\n"    \
    "Y%`. Where a table contradicts itself (its in-place and out-of-place times differ by more\n"  \
    "than 15%, or its time falls by more than 15% as the size doubles) the report names the\n"     \
    "size and the rule and gives the max without it (never the median). Each --held-out table\n"   \
    "is predicted with the fitted platform and reported the same way, never fitted. --validate\n"  \
    "FILE writes the tables as `collsim validate` cases on the written platform, which "           \
    "re-predict\n"                                                                                 \
    "them. Progress goes to stderr (--quiet: none).\n"

#endif
