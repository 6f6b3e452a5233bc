/* cancel.c linked static. */
#include "cancel.c"
