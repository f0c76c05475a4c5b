#pragma once
// The versions of the libraries DP Explorer's core is built on (Eigen, oneTBB, Boost, FFTW,
// zlib), for `dpx --version` and the GUI's About dialog: a result depends on them, so a report of
// a difference between two machines starts with this list.
#include <string>
#include <vector>

namespace dpx::core {

struct LibraryVersion {
  std::string name;     // as the library calls itself, e.g. "oneTBB"
  std::string version;  // e.g. "2021.8.0"
};

// In a fixed order. Header-only libraries (Eigen, Boost.Math) and oneTBB report the headers the
// build compiled against; FFTW (linked statically) and zlib (a shared library) report the library
// this process runs.
std::vector<LibraryVersion> libraryVersions();

}  // namespace dpx::core
