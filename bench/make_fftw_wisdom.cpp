// Regenerates resources/fftw/wisdom: FFTW_MEASURE plans of the real transforms the PLD
// composition uses (sizes 2^a, 3·2^a and 5·2^a from FFTW's threshold up to 2^22; one thread, and two
// threads from 2^18, where a lone composition splits its transforms), measured on this machine.
// Run it on an idle machine (each size is timed): `make_fftw_wisdom resources/fftw/wisdom`.
// Takes a few minutes. Sizes above 2^22 (runs of millions of steps at fine grids) keep
// FFTW_ESTIMATE: measuring them would take longer than all the runs that need them.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "numerics/real_fft.h"

using namespace dpx::core::numerics;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fftw_wisdom <output file>\n");
    return 2;
  }
  constexpr std::size_t kLargest = std::size_t{1} << 22;
  std::vector<std::size_t> sizes;
  for (std::size_t n = fftwSize(kFftwMinimumSize); n <= kLargest; n = fftwSize(n + 1)) sizes.push_back(n);
  std::vector<std::size_t> twoThreadSizes;
  for (std::size_t n : sizes) {
    if (n >= (std::size_t{1} << 18)) twoThreadSizes.push_back(n);
  }
  const auto start = std::chrono::steady_clock::now();
  const int one[] = {1};
  const int two[] = {2};
  measureFftwWisdom(sizes, one, true);
  const std::string wisdom = measureFftwWisdom(twoThreadSizes, two, false);
  std::ofstream(argv[1]) << wisdom;
  std::printf("%zu sizes (%zu on two threads) measured in %.0f s, written to %s\n", sizes.size(), twoThreadSizes.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), argv[1]);
  return 0;
}
