/* Veneer's Cheetah socket options (libos/src/linux/cheetah.rs). */
#include <stdint.h>
#include <stdio.h>

#define SOL_VENEER 0x5645
#define VENEER_CHEETAH_PUBLISH 1
#define VENEER_CHEETAH_STATS 2

struct cheetah_file {
	const char *path;
	uint64_t path_len;
	const void *data;
	uint64_t len;
};

/* The counters VENEER_CHEETAH_STATS gives, in order. */
static const char *const cheetah_stat_names[] = {
	"connections",	   "requests",	  "not_found",	     "bad_requests",
	"segments",	   "data_segments", "cached_sums",   "computed_sums",
	"bare_acks",	   "merged_fins", "retransmits",     "resets_sent",
	"resets_received", "malformed",	  "syn_dropped",     "timed_out",
	"live",
};
#define CHEETAH_STATS (sizeof cheetah_stat_names / sizeof cheetah_stat_names[0])

static inline void print_cheetah_stats(const uint64_t *w)
{
	printf("cheetah:");
	for (unsigned i = 0; i < CHEETAH_STATS; i++)
		printf(" %s=%llu", cheetah_stat_names[i], (unsigned long long)w[i]);
	printf("\n");
	fflush(stdout);
}
