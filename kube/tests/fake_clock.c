#include "kube/tests/fake_clock.h"

double fake_clock_now(void *ctx) { return ((struct fake_clock *)ctx)->t; }

void fake_clock_sleep(void *ctx, double s)
{
	struct fake_clock *fc = ctx;
	if (fc->nsleeps < 64)
		fc->sleeps[fc->nsleeps++] = s;
	fc->t += s;
}

void fake_clock_install(struct kube_client *c, struct fake_clock *fc)
{
	if (!fc)
		return;
	struct kube_clock k = { fake_clock_now, fake_clock_sleep, fc };
	kube_client_set_clock(c, &k);
}
