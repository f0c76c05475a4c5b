#pragma once
// Which code paths the numerics take. The fast paths depend on the machine: glibc's vector math
// (libmvec, up to 4 ulp, AVX2 or SSE by build) and FFTW's plans (SIMD codelets chosen at run
// time, measured wisdom) move the last bits of a result from one CPU to another. The portable
// paths — <cmath>'s scalar functions and Eigen's kissfft at every size — depend only on IEEE
// arithmetic and glibc. Privacy statements record a tolerance per value that covers the
// difference (privacy_statement.h), and a test writes a statement on one path and verifies it on
// the other. DPX_PORTABLE_NUMERICS=1 in the environment selects the portable paths for a process.

namespace dpx::core::numerics {

bool portableNumerics();

}  // namespace dpx::core::numerics
