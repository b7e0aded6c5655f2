/* check_csvout.c: the harness's per-sample CSV writer, and the committed format fixture. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/csvout.h"
#include "testutil.h"

static int count_fields(const char *line)
{
    int n = 1;

    for (; *line && *line != '\n'; line++)
        n += *line == ',';
    return n;
}

START_TEST(test_writer)
{
    char path[] = "/tmp/check_csvout.XXXXXX", line[1024];
    struct hx_csv csv;
    struct hx_row r = {
        "proto", "ll128", "recv,reduce\ncopy", 0, 0, 1, 1, 640, 576000, 576000, 64, 2, 9.1e-4,
        1980,    "ok"};
    FILE *fp;
    int fd = mkstemp(path);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(hx_csv_open(&csv, path), 0);
    hx_csv_comment(&csv, "calib_format=1 git=%s", "abc");
    hx_csv_header(&csv);
    hx_csv_row(&csv, &r);
    ck_assert_int_eq(csv.rows, 1);
    ck_assert_int_eq(hx_csv_close(&csv), 0);
    fp = fopen(path, "r");
    ck_assert_ptr_nonnull(fp);
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
    ck_assert_str_eq(line, "# calib_format=1 git=abc\n");
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
    ck_assert_str_eq(line, HX_CSV_HEADER "\n");
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
    /* The comma and newline inside op cannot break the row. */
    ck_assert_str_eq(
        line, "proto,ll128,recv_reduce_copy,0,0,1,1,640,576000,576000,64,2,9.100000e-04,1980,ok\n");
    ck_assert_ptr_null(fgets(line, sizeof(line), fp));
    fclose(fp);
    remove(path);
    close(fd);
}
END_TEST

/* The fixture has the writer's header, 15 fields per row and known statuses, and says it is
 * synthetic. */
START_TEST(test_fixture_format)
{
    FILE *fp = fopen(test_data("calibration/format-fixture.csv"), "r");
    char line[1024];
    int header = 0, rows = 0, labelled = 0;

    ck_assert_ptr_nonnull(fp);
    while (fgets(line, sizeof(line), fp)) {
        char *status;

        if (line[0] == '#') {
            labelled |=
                strstr(line, "FORMAT FIXTURE") != NULL && strstr(line, "NOT a measurement") != NULL;
            continue;
        }
        if (!header) {
            ck_assert_str_eq(line, HX_CSV_HEADER "\n");
            header = 1;
            continue;
        }
        ck_assert_int_eq(count_fields(line), 15);
        status = strrchr(line, ',') + 1;
        ck_assert_msg(strcmp(status, "ok\n") == 0 || strcmp(status, "bad_data\n") == 0, "%s", line);
        rows++;
    }
    fclose(fp);
    ck_assert(header);
    ck_assert(labelled);
    ck_assert_int_gt(rows, 100);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("csvout");
    TCase *tc = tcase_create("csv");
    SRunner *sr;
    int nf;

    tcase_add_test(tc, test_writer);
    tcase_add_test(tc, test_fixture_format);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
