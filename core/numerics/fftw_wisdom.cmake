# The FFTW wisdom embedded in dpx_core.
#
# Included by core/CMakeLists.txt, this file adds a build step that turns resources/fftw/wisdom
# (FFTW_MEASURE plans of the PLD composition's transform sizes, written by the make_fftw_wisdom
# tool in bench/) into a C++ source holding its text, read by numerics/real_fft.cpp. The same
# file is the script of that build step (run with `cmake -P`).

if(CMAKE_SCRIPT_MODE_FILE)
  # cmake -DINPUT=<wisdom file> -DOUTPUT=<.cpp> -P fftw_wisdom.cmake
  foreach(argument INPUT OUTPUT)
    if(NOT ${argument})
      message(FATAL_ERROR "fftw_wisdom.cmake: -D${argument}=... is required")
    endif()
  endforeach()
  file(READ "${INPUT}" wisdom)
  if(NOT wisdom MATCHES "^\\(fftw-3")
    message(FATAL_ERROR "${INPUT} is not FFTW wisdom (it must start with \"(fftw-3\")")
  endif()
  string(FIND "${wisdom}" ")wisdom\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )wisdom\"")
  endif()
  file(WRITE "${OUTPUT}.tmp"
"// Generated at build time by core/numerics/fftw_wisdom.cmake from resources/fftw/wisdom. Do not edit.
namespace dpx::core::numerics::detail {

extern const char* const kShippedFftwWisdom;
const char* const kShippedFftwWisdom = R\"wisdom(${wisdom})wisdom\";

}  // namespace dpx::core::numerics::detail
")
  file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
  return()
endif()

set(dpx_wisdom_input ${PROJECT_SOURCE_DIR}/resources/fftw/wisdom)
set(dpx_wisdom_output ${CMAKE_CURRENT_BINARY_DIR}/generated/fftw_wisdom.cpp)
add_custom_command(
  OUTPUT ${dpx_wisdom_output}
  COMMAND ${CMAKE_COMMAND} -DINPUT=${dpx_wisdom_input} -DOUTPUT=${dpx_wisdom_output} -P ${CMAKE_CURRENT_LIST_FILE}
  DEPENDS ${dpx_wisdom_input} ${CMAKE_CURRENT_LIST_FILE}
  COMMENT "Embedding resources/fftw/wisdom"
  VERBATIM)
target_sources(dpx_core PRIVATE ${dpx_wisdom_output})
