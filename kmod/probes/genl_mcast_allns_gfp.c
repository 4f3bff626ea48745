// SPDX-License-Identifier: GPL-2.0
/*
 * HAS_GENL_MCAST_ALLNS_GFP: genlmsg_multicast_allns() still takes a gfp_t
 * as its last argument. Upstream dropped it in 6.10 (the multicast now
 * always allocates with GFP_ATOMIC under RCU), and stable 6.1.y followed:
 * Debian's 6.1 has the four-argument form, older 6.1 builds the five.
 */
#include <net/genetlink.h>

int probe(const struct genl_family *family, struct sk_buff *skb);
int probe(const struct genl_family *family, struct sk_buff *skb)
{
	return genlmsg_multicast_allns(family, skb, 0, 0, GFP_KERNEL);
}
