// SPDX-License-Identifier: GPL-2.0
/*
 * HAS_GENL_SPLIT_OPS: the family's pre_doit/post_doit hooks are handed a
 * const struct genl_split_ops * (6.2, when genetlink split each command
 * into do and dump halves); before, a const struct genl_ops *.
 */
#include <net/genetlink.h>

static int pre_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
		    struct genl_info *info)
{
	return 0;
}

void probe(struct genl_family *family);
void probe(struct genl_family *family)
{
	family->pre_doit = pre_doit;
}
