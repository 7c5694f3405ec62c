/* maps_fixture.h - the cmocka fixture of the unit tests that need the data path loaded and its
 * maps as the daemon holds them (struct xb_maps): open it in a setup, close it in a teardown,
 * and skip a test when this kernel cannot load it (dp_can_load() said why). Header only, so
 * that the harness library, which the benchmarks link too, needs no cmocka; include it after
 * <cmocka.h>. Test support only. */
#ifndef XDPBAN_TEST_MAPS_FIXTURE_H
#define XDPBAN_TEST_MAPS_FIXTURE_H

#include <stdlib.h>
#include "dp.h"

struct maps_fixture {
	struct dp dp;
	struct xb_maps m; /* the loaded maps: a copy of dp.maps */
};

/* *state gets the fixture, or NULL when the data path cannot load here (the tests skip).
 * opts may be NULL. 0, or -1 when it can load but did not. */
static inline int maps_fixture_open(void **state, const struct dp_opts *opts)
{
	struct maps_fixture *f;

	*state = NULL;
	if (!dp_can_load())
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f || dp_open(&f->dp, opts)) {
		free(f);
		return -1;
	}
	f->m = f->dp.maps;
	*state = f;
	return 0;
}

static inline int maps_fixture_close(void **state)
{
	struct maps_fixture *f = *state;

	if (f) {
		dp_close(&f->dp);
		free(f);
	}
	return 0;
}

/* The fixture of a test, or a skip. */
static inline struct maps_fixture *maps_fixture_need(void **state)
{
	if (!*state)
		skip();
	return *state;
}

#endif /* XDPBAN_TEST_MAPS_FIXTURE_H */
