/* resource.Quantity as k8s.io/apimachinery/pkg/api/resource has it: parsing ("100m", "1.5Gi",
 * "1e3"), canonical String() form, comparison, and the rounded-up Value()/MilliValue() the
 * scheduler uses for memory bytes and milli-cpu.
 *
 * A quantity is an exact decimal: mantissa * 10^scale, mantissa a signed 128-bit integer
 * (upstream's int64Amount widened; anything upstream's inf.Dec path accepts within 38 digits
 * is exact). Plain value type: copy freely, nothing to free. */
#ifndef KUBE_QUANTITY_H
#define KUBE_QUANTITY_H

#include <stdbool.h>
#include <stdint.h>

enum kube_quantity_format {
	KUBE_QUANTITY_DECIMAL_SI = 0,	/* "", k, M, G, T, P, E, and m, u, n */
	KUBE_QUANTITY_BINARY_SI,	/* Ki, Mi, Gi, Ti, Pi, Ei */
	KUBE_QUANTITY_DECIMAL_EXPONENT, /* 1e3, 1E3 */
};

__extension__ typedef __int128 kube_int128;

struct kube_quantity {
	kube_int128 mantissa; /* value = mantissa * 10^scale */
	int32_t scale;
	enum kube_quantity_format format;
};

/* Parses s with upstream's grammar: [+-] digits [. digits] suffix, where the number may also
 * be ".5" or "5."; suffix one of the binary SI, decimal SI or e/E exponent forms. No spaces.
 * Returns 0, or -1 with *err (caller frees; err may be NULL) — upstream's messages:
 * "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
 * or "unable to parse quantity's suffix"; "unable to parse numeric part of quantity" when the
 * value needs more than 38 significant digits after rounding (or the input has more than 512).
 * Like upstream, values are rounded away from zero to nano precision, BinarySI is capped at
 * 2^63-1, and a bare suffix/sign/dot ("Gi", "-", ".") parses as zero. */
int kube_quantity_parse(const char *s, struct kube_quantity *q, char **err);

/* Upstream Value(): the value rounded up (towards +inf) to an integer, saturated to int64. */
int64_t kube_quantity_value(const struct kube_quantity *q);
/* Upstream MilliValue(): value*1000 rounded up, saturated to int64. */
int64_t kube_quantity_milli_value(const struct kube_quantity *q);
/* value * 10^scale rounded up, saturated (upstream ScaledValue). */
int64_t kube_quantity_scaled_value(const struct kube_quantity *q, int32_t scale);

/* Canonical form exactly as upstream String(); writes into buf and returns buf. */
char *kube_quantity_format(const struct kube_quantity *q, char buf[64]);

/* -1, 0, 1 comparing values (format ignored). */
int kube_quantity_cmp(const struct kube_quantity *a, const struct kube_quantity *b);
bool kube_quantity_is_zero(const struct kube_quantity *q);
int kube_quantity_sign(const struct kube_quantity *q);

/* a += b (upstream Add: keeps a's format, or b's when a is zero). Returns 0, or -1 when the
 * result does not fit (a unchanged). */
int kube_quantity_add(struct kube_quantity *a, const struct kube_quantity *b);
int kube_quantity_sub(struct kube_quantity *a, const struct kube_quantity *b);

/* Constructors as upstream NewQuantity / NewMilliQuantity / NewScaledQuantity. */
struct kube_quantity kube_quantity_from_int64(int64_t v, enum kube_quantity_format f);
struct kube_quantity kube_quantity_from_milli(int64_t milli, enum kube_quantity_format f);
struct kube_quantity kube_quantity_from_scaled(int64_t v, int32_t scale, enum kube_quantity_format f);

/* Parse and convert in one go (cpu: milli, memory/storage/pods: value). 0 or -1. */
int kube_parse_milli(const char *s, int64_t *out);
int kube_parse_value(const char *s, int64_t *out);

#endif
