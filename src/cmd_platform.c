/* cmd_platform.c: `collsim platform`: write a SimGrid platform file for an A100 family. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "platform.h"

const char cmd_platform_usage[] =
    "usage: collsim platform FAMILY [--nodes N] [--gpus-per-node N] [--rows R --columns C]\n"
    "                        [--between pcie|net] [--params FILE ...] [--set KEY=VALUE ...]\n"
    "                        [-o FILE]\n"
    "\n"
    "Write a SimGrid platform file (DTD 4.1) for an A100 machine, with the timing model's\n"
    "parameters as <prop>s on the root zone, each after a comment naming its source.\n"
    "One host per GPU (gpu0, gpu1, ...), split-duplex links carrying a cs.class prop\n"
    "(nvlink, pcie or net) that selects the per-call overhead. FAMILY is one of:\n"
    "  a100-pcie-4gpu      A100 PCIe cards (--gpus-per-node, default 4) behind two CPU sockets\n"
    "  a100-pcie-nvbridge  NVLink-bridged pairs of A100 PCIe cards joined by PCIe\n"
    "  a100-hier           --rows R GPUs per column on NVLink, --columns C joined by\n"
    "                      --between pcie (default) or net; gpu c*R+r is row r of column c\n"
    "  dgx-a100, ndv4      8 A100 SXM on NVSwitch, one HDR NIC per GPU; --nodes N nodes\n"
    "--params FILE sets parameters from a props file (what `collsim calibrate fit` writes:\n"
    "<!-- SOURCE --> and <prop id=\"KEY\" value=\"V\"/> lines); each prop's comment becomes its\n"
    "source in the platform. --set KEY=VALUE overrides any parameter (keys in src/params.h,\n"
    "e.g. cs.link_Bps.pcie=16e9). Options apply in order; the last setting of a key wins.\n"
    "Without -o the file goes to stdout.\n";

static int parse_count(const char *opt, const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (end == s || *end != '\0' || v < 1 || v > 4096)
        return cmd_usage_error("%s takes a positive integer, not '%s'", opt, s);
    *out = (int)v;
    return 0;
}

int cmd_platform(int argc, char **argv)
{
    struct cs_platform_spec spec;
    struct cs_params params;
    struct cs_error err;
    struct cs_param_notes *notes;
    char origin[1024] = "", note[400];
    enum cs_platform_family fam;
    const char *out = "-";
    int rc, have_rows = 0, have_cols = 0, have_gpn = 0, have_nodes = 0;

    if (argc < 2)
        return cmd_usage_error("platform needs a FAMILY; see 'collsim help platform'");
    fam = cs_platform_family_parse(argv[1]);
    if (fam == 0)
        return cmd_usage_error("unknown platform family '%s' (a100-pcie-4gpu, a100-pcie-nvbridge, "
                               "a100-hier, dgx-a100, ndv4)",
                               argv[1]);
    cs_platform_spec_init(&spec, fam);
    cs_params_init(&params);
    cs_error_init(&err);
    notes = calloc(1, sizeof(*notes));
    if (notes == NULL) {
        fprintf(stderr, "collsim: out of memory\n");
        return CS_EXIT_USAGE;
    }
    rc = CS_EXIT_OK;
    for (int i = 2; i < argc && rc == CS_EXIT_OK; i++) {
        const char *a = argv[i];

        if (i + 1 >= argc) {
            rc = cmd_usage_error("%s: missing value or unknown option", a);
            break;
        }
        if (strcmp(a, "-o") != 0) {
            size_t used = strlen(origin);

            /* option names without their dashes: XML comments cannot hold "--" */
            snprintf(origin + used, sizeof(origin) - used, "%s%s %s", used ? ", " : "",
                     a + strspn(a, "-"), argv[i + 1]);
        }
        if (strcmp(a, "--params") == 0) {
            if (cs_params_read_props(&params, argv[++i], notes, &err) != 0) {
                cmd_print_error(&err);
                rc = CS_EXIT_USAGE;
            }
        } else if (strcmp(a, "-o") == 0) {
            out = argv[++i];
        } else if (strcmp(a, "--nodes") == 0) {
            rc = parse_count(a, argv[++i], &spec.nodes);
            have_nodes = 1;
        } else if (strcmp(a, "--gpus-per-node") == 0) {
            rc = parse_count(a, argv[++i], &spec.gpus_per_node);
            have_gpn = 1;
        } else if (strcmp(a, "--rows") == 0) {
            rc = parse_count(a, argv[++i], &spec.rows);
            have_rows = 1;
        } else if (strcmp(a, "--columns") == 0) {
            rc = parse_count(a, argv[++i], &spec.columns);
            have_cols = 1;
        } else if (strcmp(a, "--between") == 0) {
            spec.between = cs_link_class_parse(argv[++i]);
            if (spec.between != CS_LINK_PCIE && spec.between != CS_LINK_NET)
                rc = cmd_usage_error("--between takes pcie or net, not '%s'", argv[i]);
        } else if (strcmp(a, "--set") == 0) {
            char kv[256], *eq;

            snprintf(kv, sizeof(kv), "%s", argv[++i]);
            eq = strchr(kv, '=');
            if (eq == NULL) {
                rc = cmd_usage_error("--set takes KEY=VALUE, not '%s'", argv[i]);
                break;
            }
            *eq = '\0';
            snprintf(note, sizeof(note), "set %.300s on the command line", argv[i]);
            if (cs_params_set(&params, kv, eq + 1, &err) != 0) {
                cmd_print_error(&err);
                rc = CS_EXIT_USAGE;
            } else if (cs_param_notes_put(notes, kv, note) != 0) {
                rc = cmd_usage_error("too many --set and --params parameters");
            }
        } else {
            rc = cmd_usage_error("unknown option '%s'; see 'collsim help platform'", a);
        }
    }
    if (rc == CS_EXIT_OK && (have_rows || have_cols) && fam != CS_FAM_HIER)
        rc = cmd_usage_error("--rows and --columns apply to a100-hier only");
    else if (rc == CS_EXIT_OK && have_nodes && fam != CS_FAM_DGX)
        rc = cmd_usage_error("--nodes applies to dgx-a100 / ndv4 only");
    else if (rc == CS_EXIT_OK && have_gpn && fam == CS_FAM_DGX && spec.gpus_per_node != 8)
        rc = cmd_usage_error("dgx-a100 has 8 GPUs per node");
    else if (rc == CS_EXIT_OK && have_gpn && fam == CS_FAM_HIER)
        rc = cmd_usage_error("a100-hier takes --rows and --columns");
    if (rc != CS_EXIT_OK) {
        free(notes);
        return rc;
    }
    spec.notes = notes;
    spec.origin = origin[0] ? origin : NULL;
    rc = cs_platform_write(&spec, &params, out, &err);
    free(notes);
    if (rc != 0) {
        cmd_print_error(&err);
        return CS_EXIT_USAGE;
    }
    return CS_EXIT_OK;
}
