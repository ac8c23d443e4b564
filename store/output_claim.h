// OutputClaim: an ingest's exclusive hold on its output path, and the
// clean-up of what killed ingests of that path left behind.
//
// Each ingest writes under OUT.tmp-<pid> (the table) and OUT.tmp-<pid>-spill
// (sorted runs), and holds flock(2) on OUT.tmp-<pid>-spill/LOCK until its
// table is renamed into place or it gives up. The kernel drops the lock when
// the process dies, however it dies, so:
//   - a LOCK that is held means another ingest is writing OUT: Acquire()
//     fails with "being written by another ingest (pid N)";
//   - temp folders whose lock is free and whose pid is gone are leftovers of
//     a killed ingest: Acquire() removes them (a lock that is free while its
//     pid lives may be an ingest still starting; those are left alone).
// The claim takes its own lock before looking at the others, so of two
// ingests starting at once at least one sees the other (both may refuse;
// never both proceed). Nothing is left on disk once the claim is released.
#ifndef TRACETABLE_STORE_OUTPUT_CLAIM_H_
#define TRACETABLE_STORE_OUTPUT_CLAIM_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tracetable {

struct Leftover {
  std::string path;
  int pid = 0;
  bool writing = false;  // its ingest is running (lock held)
};

// The OUT.tmp-<pid>[-spill] folders next to `out`.
std::vector<Leftover> FindLeftovers(const std::string& out);

class OutputClaim {
 public:
  // Creates OUT.tmp-<pid>-spill with its LOCK held, then removes leftovers of
  // dead ingests; `removed` (may be null) gets their paths.
  static absl::StatusOr<std::unique_ptr<OutputClaim>> Acquire(const std::string& out,
                                                              std::vector<std::string>* removed);
  // Removes the spill folder and releases the lock.
  ~OutputClaim();

  const std::string& spill_dir() const { return spill_dir_; }

 private:
  OutputClaim() = default;
  std::string spill_dir_;
  int fd_ = -1;
};

}  // namespace tracetable

#endif  // TRACETABLE_STORE_OUTPUT_CLAIM_H_
