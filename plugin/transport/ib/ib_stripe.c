#include "ib_stripe.h"

void ib_stripe_split(size_t size, int nqps, struct ib_share *shares)
{
	size_t per = (size + (size_t)nqps - 1) / (size_t)nqps;
	size_t off = 0;

	per = (per + IB_STRIPE_ALIGN - 1) / IB_STRIPE_ALIGN * IB_STRIPE_ALIGN;
	for (int i = 0; i < nqps; i++) {
		size_t len = size - off < per ? size - off : per;

		shares[i].off = off;
		shares[i].len = len;
		off += len;
	}
}
