/* The command-line parsers: integer overflow in k/m suffixes, names that must
 * be refused, and many calls in one process giving the same answers (what the
 * libFuzzer harnesses in tests/fuzz rely on: no exit, no state, no leaks). */
#include "bench_options.h"
#include "cli.h"
#include "cmd_args.h"
#include "test_util.h"

#include <limits.h>
#include <string.h>

static int count;

static void check_int(const char *s, long lo, long hi, int want_ok, long want)
{
    long v = -7;
    int ok = cli_parse_int(s, lo, hi, &v);
    int good = ok == want_ok && (!ok || v == want);
    EXPECT(good, "cli_parse_int('%s') -> %d, %ld (want %d, %ld)", s, ok, v, want_ok, want);
    count += good;
}

static void check_u64(const char *s, int want_ok, uint64_t want)
{
    uint64_t v = 7;
    int ok = cli_parse_u64(s, &v);
    int good = ok == want_ok && (!ok || v == want);
    EXPECT(good, "cli_parse_u64('%s') -> %d", s, ok);
    count += good;
}

#define ARGS(...) ((char *[]){__VA_ARGS__, NULL})

static int argc_of(char **argv)
{
    int n = 0;
    while (argv[n]) ++n;
    return n;
}

static void check_bench(char **argv, int want_rc, long want_seq0)
{
    bench_options o;
    int rc = bench_parse_options(argc_of(argv), argv, &o);
    int good = rc == want_rc && (rc != 0 || want_seq0 == 0 || (o.nseq >= 1 && o.seq[0] == want_seq0));
    EXPECT(good, "bench %s %s -> %d (want %d)", argv[1], argv[2] ? argv[2] : "", rc, want_rc);
    count += good;
}

static void check_run(char **argv, int want_rc)
{
    run_args a;
    int rc = run_parse_args(argc_of(argv), argv, &a);
    EXPECT(rc == want_rc, "run ... %s -> %d (want %d)", argv[argc_of(argv) - 1], rc, want_rc);
    count += rc == want_rc;
}

static void check_check(char **argv, int want_rc, int want_ndtypes)
{
    check_args a;
    int rc = check_parse_args(argc_of(argv), argv, &a);
    int good = rc == want_rc && (rc != 0 || a.ndtypes == want_ndtypes);
    EXPECT(good, "check %s %s -> %d (want %d)", argv[1], argv[2], rc, want_rc);
    count += good;
}

static void parse_all(void)
{
    /* 18014398509481985 * 1024 = 2^64 + 1024: wrapped to a 1024-length case before */
    check_bench(ARGS("bench", "--seq", "18014398509481985k"), EXIT_USAGE, 0);
    check_bench(ARGS("bench", "--seq", "4k,1m", "--heads", "8"), 0, 4096);
    check_bench(ARGS("bench", "--seq-kv", "9223372036854775807m"), EXIT_USAGE, 0);
    check_bench(ARGS("bench", "--seq", "1k,,2k"), EXIT_USAGE, 0);
    check_bench(ARGS("bench", "--batch", "1m", "--heads", "1m", "--seq", "16m", "--head-dim", "1024"), 0, 16777216);
    check_bench(ARGS("bench", "--impl", "bogus"), EXIT_USAGE, 0);
    check_bench(ARGS("bench", "--impl", "attnvk,cudnn"), 0, 0);
    check_bench(ARGS("bench", "--variant", "bogus"), EXIT_USAGE, 0);
    check_bench(ARGS("bench", "--api", "cpu", "--variant", "wgmma"), EXIT_USAGE, 0);
    check_bench(ARGS("bench", "--api", "cpu", "--variant", "reference-f64"), 0, 0);
    check_bench(ARGS("bench", "--api", "cpu,"), EXIT_USAGE, 0);
    check_bench(ARGS("bench", "--device", ""), EXIT_USAGE, 0);
    check_bench(ARGS("bench", "--warmup", "k"), EXIT_USAGE, 0);

    const char *base[] = {"run", "--api", "cpu", "--q", "q", "--k", "k", "--v", "v", "--out", "o"};
    char *run[16];
    memcpy(run, base, sizeof base);
    int n = (int)(sizeof base / sizeof *base);
    run[n] = NULL;
    check_run(run, 0);
    const char *extra[][2] = {{"--impl", "bogus"}, {"--impl", "attnvk,cudnn"}, {"--variant", "wgmma"},
                              {"--split-kv", "18014398509481985k"}, {"--device", ""}, {"--q", ""}};
    for (size_t e = 0; e < sizeof extra / sizeof *extra; ++e) {
        run[n] = (char *)extra[e][0], run[n + 1] = (char *)extra[e][1], run[n + 2] = NULL;
        check_run(run, EXIT_USAGE);
    }

    check_check(ARGS("check", "--impl", "bogus"), EXIT_USAGE, 0);
    check_check(ARGS("check", "--impl", "cudnn"), 0, 3);
    check_check(ARGS("check", "--seed", "99999999999999999999"), EXIT_USAGE, 0);
    check_check(ARGS("check", "--dtype", "f32,"), EXIT_USAGE, 0);
    check_check(ARGS("check", "--api", "cpu", "--dtype", "f32,f16"), 0, 2);
    check_check(ARGS("check", "--device", ""), EXIT_USAGE, 0);
}

int main(void)
{
    check_int("4k", 1, LONG_MAX, 1, 4096);
    check_int("2M", 1, LONG_MAX, 1, 2097152);
    check_int("-1k", -2048, 0, 1, -1024);
    check_int("8796093022208k", 1, LONG_MAX, 1, 9007199254740992l); /* 2^53 */
    check_int("9007199254740992k", 1, LONG_MAX, 0, 0);               /* 2^63 */
    check_int("18014398509481985k", 1, LONG_MAX, 0, 0);              /* 2^64 + 1024 */
    check_int("9223372036854775807m", 1, LONG_MAX, 0, 0);
    check_int("-9223372036854775807k", LONG_MIN, 0, 0, 0);
    check_int("99999999999999999999", 1, LONG_MAX, 0, 0);
    check_int("k", 0, 10, 0, 0);
    check_int("", 0, 10, 0, 0);
    check_int("5x", 0, 10, 0, 0);
    check_u64("18446744073709551615", 1, UINT64_MAX);
    check_u64("18446744073709551616", 0, 0);
    check_u64("-1", 0, 0);
    check_u64(" 1", 0, 0);
    check_u64("+1", 0, 0);
    int ok = cli_list_well_formed("a,b") && !cli_list_well_formed("") && !cli_list_well_formed(",a") &&
             !cli_list_well_formed("a,") && !cli_list_well_formed("a,,b") && !cli_list_well_formed(NULL);
    EXPECT(ok, "cli_list_well_formed");
    count += ok;
    /* again and again in one process: the same answers each time */
    int before = avk_test_failures;
    for (int round = 0; round < 50 && avk_test_failures == before; ++round) parse_all();
    return avk_test_finish(count, 0);
}
