#include "ocd_thread_local.h"

_Thread_local void *ocd_thread_local_slots[OCD_THREAD_LOCAL_SLOT_COUNT];
