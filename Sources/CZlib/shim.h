// The system zlib, for inflating the raw-DEFLATE model cache (Z_MODELCACHE) of Core Data stores.
#include <zlib.h>
