/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An empty CPU profile for a unit test (test_profile, test_flamegraph).
 * Include after <cmocka.h>.
 */
#ifndef TAPROOT_TESTS_NEWPROFILE_H
#define TAPROOT_TESTS_NEWPROFILE_H

#include "profile/profile.h"

/* A CPU profile of 100 Hz holding at most @max_stacks stacks (0: no bound). */
static inline struct taproot_profile *new_cpu(size_t max_stacks)
{
	struct taproot_profile_desc d;
	struct taproot_profile *p;

	taproot_profile_desc_cpu(&d, 100);
	d.max_stacks = max_stacks;
	assert_int_equal(taproot_profile_new(&d, &p), 0);
	return p;
}

#endif /* TAPROOT_TESTS_NEWPROFILE_H */
