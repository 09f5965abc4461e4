/* The scheduler's side of the string interning of schedkit/types.h (scheduler/api/intern.c). */
#ifndef SK_API_INTERN_H
#define SK_API_INTERN_H

/* The interned string equal to s when one exists, else NULL; adds nothing (so a pod's selector
 * values, which may be anything, never grow the table). Lock-free; a string interned concurrently
 * may be missed. */
const char *sk_intern_find(const char *s);

#endif
