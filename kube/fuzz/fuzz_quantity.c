/* libFuzzer target: resource quantities (kube/quantity.h). Any string is parsed; an accepted one
 * must format, and the canonical form must parse back to the same value and, from the second
 * round, format to itself. The integer conversions and arithmetic run on it too. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1024)
		return 0;
	char s[1025];
	memcpy(s, data, size);
	s[size] = '\0';
	struct kube_quantity q;
	char *err = NULL;
	if (kube_quantity_parse(s, &q, &err) != 0) {
		if (!err)
			abort(); /* rejections carry upstream's message */
		free(err);
		return 0;
	}
	char f1[64], f2[64];
	kube_quantity_format(&q, f1);
	if (strlen(f1) >= sizeof(f1))
		abort();
	struct kube_quantity r;
	if (kube_quantity_parse(f1, &r, NULL) != 0)
		abort(); /* the canonical form is a quantity */
	if (kube_quantity_cmp(&q, &r) != 0)
		abort(); /* ... of the same value */
	/* Not always canonical at once: a BinarySI value that is no whole multiple of 1024 prints
	 * without a suffix ("31.25Ki" -> "32000"), which parses as DecimalSI ("32k"), as upstream.
	 * From the second round on the form is a fixed point. */
	struct kube_quantity t;
	char f3[64];
	kube_quantity_format(&r, f2);
	if (kube_quantity_parse(f2, &t, NULL) != 0 || kube_quantity_cmp(&t, &q) != 0)
		abort();
	if (strcmp(kube_quantity_format(&t, f3), f2) != 0)
		abort();
	if (kube_quantity_sign(&q) != kube_quantity_sign(&r) || kube_quantity_is_zero(&q) != kube_quantity_is_zero(&r))
		abort();
	(void)kube_quantity_value(&q);
	(void)kube_quantity_milli_value(&q);
	(void)kube_quantity_scaled_value(&q, (int32_t)(size % 40) - 20);
	struct kube_quantity sum = q;
	if (kube_quantity_add(&sum, &r) == 0 && kube_quantity_sub(&sum, &r) == 0 && kube_quantity_cmp(&sum, &q) != 0)
		abort(); /* (q + r) - r == q when nothing overflowed */
	return 0;
}
