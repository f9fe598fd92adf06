// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/run_report.hpp"

namespace squall::apps {

void add_run_figures(Figures& figures, const RunFigures& run) {
  figures.add("app", run.app);
  figures.add("version", run.version);
  figures.add("nodes", static_cast<std::int64_t>(run.nodes));
  figures.add("time_s", run.time_s);
  figures.add("messages", run.counts.messages);
  figures.add("bytes", run.counts.bytes);
  figures.add("misses", run.counts.misses);
  figures.add("invalidations", run.counts.invalidations);
  figures.add("lock_waits", run.counts.lock_waits);
  figures.add("checksum_ok", std::string(run.checksum_ok ? "true" : "false"));
  if (run.seq_time_s > 0 && run.time_s > 0) {
    figures.add("seq_time_s", run.seq_time_s);
    figures.add("speedup", run.seq_time_s / run.time_s);
  }
}

}  // namespace squall::apps
