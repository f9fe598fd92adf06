// Collective steps the runtime itself uses.
#pragma once

namespace squall::detail {
// The barrier of finalize, distinct from barrier() so that a node finalizing while
// another waits in a barrier is reported as a mismatch instead of passing.
void finalize_barrier();
}
