#include "common/library_versions.h"

#include <fftw3.h>
#include <oneapi/tbb/version.h>
#include <zlib.h>

#include <Eigen/Core>
#include <boost/version.hpp>
#include <string_view>

namespace dpx::core {
namespace {

// "fftw-3.3.10-sse2-avx" → "3.3.10 (sse2, avx)": the build's SIMD kernels decide its speed.
std::string fftwVersion() {
  std::string_view text = fftw_version;
  constexpr std::string_view kPrefix = "fftw-";
  if (text.starts_with(kPrefix)) text.remove_prefix(kPrefix.size());
  const std::size_t dash = text.find('-');
  if (dash == std::string_view::npos) return std::string(text);
  std::string out(text.substr(0, dash));
  out += " (";
  for (char c : text.substr(dash + 1)) {
    if (c == '-') {
      out += ", ";
    } else {
      out += c;
    }
  }
  out += ')';
  return out;
}

}  // namespace

std::vector<LibraryVersion> libraryVersions() {
  return {
      {"Eigen", std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                    std::to_string(EIGEN_MINOR_VERSION)},
      {"oneTBB", TBB_VERSION_STRING},
      {"Boost", std::to_string(BOOST_VERSION / 100000) + "." + std::to_string(BOOST_VERSION / 100 % 1000) + "." +
                    std::to_string(BOOST_VERSION % 100)},
      {"FFTW", fftwVersion()},
      {"zlib", zlibVersion()},
  };
}

}  // namespace dpx::core
