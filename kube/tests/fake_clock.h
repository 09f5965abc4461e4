/* A fake clock for the REST client's rate limiter and retry backoff (kube_client_set_clock),
 * shared by the kube/tests suites (lib/libtestsupport.a): now is t; a sleep is recorded (the
 * first 64) and advances t. */
#ifndef KUBE_TESTS_FAKE_CLOCK_H
#define KUBE_TESTS_FAKE_CLOCK_H

#include "kube/rest.h"

struct fake_clock { double t; double sleeps[64]; int nsleeps; };

double fake_clock_now(void *ctx);
void fake_clock_sleep(void *ctx, double s);
/* Puts fc on c (fc may be NULL: c keeps the real clock). */
void fake_clock_install(struct kube_client *c, struct fake_clock *fc);

#endif
