/* Golden-file helpers shared by the operator's tests: files live in operator/tests/golden/ under
 * $SK_ROOT (or the current directory); SK_UPDATE_GOLDEN=1 rewrites them instead of comparing. */
#ifndef OP_TESTS_GOLDEN_H
#define OP_TESTS_GOLDEN_H

/* The whole file, NUL-terminated, or NULL when it cannot be read. Caller frees. */
char *golden_read_file(const char *path);
/* Fails the running cmocka test when text differs from golden file `name` (printing what it got). */
void assert_golden(const char *name, const char *text);

#endif
