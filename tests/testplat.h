/* testplat.h: temporary a100-hier platforms for the replay suites (needs check.h, platform.h). */
#ifndef CS_TESTPLAT_H
#define CS_TESTPLAT_H

#include <stdio.h>
#include <unistd.h>

/* Write the platform of spec with parameters p to a new temporary file (its path goes to path,
 * at least 64 bytes) and read it back. */
static inline struct cs_platform *test_platform_spec(const struct cs_platform_spec *spec,
                                                     const struct cs_params *p, char *path)
{
    struct cs_platform *plat = NULL;
    int fd;

    snprintf(path, 64, "/tmp/cs-plat-XXXXXX");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(cs_platform_write(spec, p, path, NULL), 0);
    ck_assert_int_eq(cs_platform_read(path, &plat, NULL), 0);
    return plat;
}

/* A rows x columns a100-hier platform (columns joined by PCIe), as test_platform_spec. */
static inline struct cs_platform *test_platform_hier(int rows, int columns,
                                                     const struct cs_params *p, char *path)
{
    struct cs_platform_spec spec;

    cs_platform_spec_init(&spec, CS_FAM_HIER);
    spec.rows = rows;
    spec.columns = columns;
    return test_platform_spec(&spec, p, path);
}

/* Zero every protocol overhead and throughput cap and give every protocol all of a link, so that
 * only the links cost time. */
static inline void test_platform_bare(struct cs_platform *plat)
{
    plat->params.deploy_s = 0;
    plat->params.prologue_s = plat->params.dep_s = plat->params.barrier_s = 0;
    plat->params.flag_s = 0;
    for (int q = 0; q < CS_NPROTO; q++) {
        plat->params.tb_Bps[q] = 0;
        plat->params.pass_bytes[q] = 0; /* line by line */
        plat->params.pass_s[q] = 0;
        for (int c = 0; c < CS_NLINK; c++) {
            plat->params.call_s[q][c] = 0;
            plat->params.link_eff[q][c] = 1;
        }
    }
    plat->params.copy_Bps = 0;
    plat->params.reduce_Bps = 0;
}

#endif
