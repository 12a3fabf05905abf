/* What libclang reads for <stdatomic.h> (frontend/unit.py puts this directory first):
 * clang's own header, which, in a hosted environment, hands over to the next
 * <stdatomic.h> in the search path, gcc's, written in builtins clang does not parse.
 * Told it is freestanding, it defines everything itself.  The C compiler never sees
 * this file. */
#pragma push_macro("__STDC_HOSTED__")
#undef __STDC_HOSTED__
#define __STDC_HOSTED__ 0
#include_next <stdatomic.h>
#pragma pop_macro("__STDC_HOSTED__")
