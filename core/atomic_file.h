// core/atomic_file.h — writing a file so that a crash leaves the old one or the new one,
// never a mix, and cleaning up after the writers that were killed.
//
// The bytes go to a temporary "<path>.tmp-<pid>-<n>" in the same directory, which is
// flushed to disk and then renamed over <path>: rename is atomic on POSIX file systems, so
// a reader (or a resumed run) sees either the complete old file or the complete new one. A
// process killed before its rename leaves its temporary behind; the next write of the same
// path removes the temporaries of processes that no longer exist.
#pragma once

#include <string>
#include <string_view>

namespace tg {

/// Writes `bytes` to `path` atomically (see above), after removing stale temporaries.
/// ValueError "<what>: cannot save '<path>': <step> '<temporary>' failed: <reason>".
void write_file_atomically(const std::string& path, std::string_view bytes, std::string_view what);

/// Removes the files "<path>.tmp-<pid>-<n>" whose process <pid> is gone; returns how many.
/// Temporaries of other live processes are left alone, and so are those this process is
/// writing; one with this process's pid that it is not writing was left by an earlier
/// process with the same pid (pids are reused), and is removed.
int remove_stale_temporaries(const std::string& path);

}  // namespace tg
