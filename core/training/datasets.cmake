# The datasets embedded in dpx_core.
#
# Included by core/CMakeLists.txt, this file adds, for each gzipped CSV in resources/datasets/, a
# build step that turns it into a C++ source holding its bytes, so the
# built-in datasets need no file at run time and nothing is downloaded. The same file is the
# script of that build step (run with `cmake -P`), which keeps the generator next to its only use.

if(CMAKE_SCRIPT_MODE_FILE)
  # cmake -DINPUT=<file> -DOUTPUT=<.cpp> -DFUNCTION=<accessor> -P datasets.cmake
  foreach(argument INPUT OUTPUT FUNCTION)
    if(NOT ${argument})
      message(FATAL_ERROR "datasets.cmake: -D${argument}=... is required")
    endif()
  endforeach()
  file(READ "${INPUT}" hex HEX)
  string(LENGTH "${hex}" hexLength)
  math(EXPR byteCount "${hexLength} / 2")
  # 16 bytes per line keeps the generated file readable by tools that choke on long lines.
  set(lineOfBytes "")
  foreach(i RANGE 1 16)
    string(APPEND lineOfBytes "[0-9a-f][0-9a-f]")
  endforeach()
  string(REGEX REPLACE "(${lineOfBytes})" "\\1\n    " hex "${hex}")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  get_filename_component(inputName "${INPUT}" NAME)
  file(WRITE "${OUTPUT}.tmp"
"// Generated at build time by core/training/datasets.cmake from resources/datasets/${inputName}
// (${byteCount} bytes, gzip, decompressed by training::gunzip at load). Do not edit.
#include \"training/builtin_datasets.h\"

namespace dpx::core::training::detail {

static const unsigned char kData[] = {
    ${bytes}};
static constexpr std::size_t kSize = ${byteCount};
static_assert(sizeof kData == kSize);

std::span<const std::uint8_t> ${FUNCTION}() { return {kData, kSize}; }

}  // namespace dpx::core::training::detail
")
  file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
  return()
endif()

set(dpx_dataset_resources ${PROJECT_SOURCE_DIR}/resources/datasets)
set(dpx_dataset_generated ${CMAKE_CURRENT_BINARY_DIR}/generated/datasets)
file(MAKE_DIRECTORY ${dpx_dataset_generated})
# <file in resources/datasets>=<accessor declared in training/builtin_datasets.h>
foreach(dpx_entry
    "digits.csv.gz=embeddedDigitsCsvGz"
    "breast_cancer.csv.gz=embeddedBreastCancerCsvGz")
  string(REPLACE "=" ";" dpx_entry "${dpx_entry}")
  list(GET dpx_entry 0 dpx_file)
  list(GET dpx_entry 1 dpx_function)
  set(dpx_output ${dpx_dataset_generated}/${dpx_function}.cpp)
  add_custom_command(
    OUTPUT ${dpx_output}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${dpx_dataset_resources}/${dpx_file} -DOUTPUT=${dpx_output}
            -DFUNCTION=${dpx_function} -P ${CMAKE_CURRENT_LIST_FILE}
    DEPENDS ${dpx_dataset_resources}/${dpx_file} ${CMAKE_CURRENT_LIST_FILE}
    COMMENT "Embedding resources/datasets/${dpx_file}"
    VERBATIM)
  target_sources(dpx_core PRIVATE ${dpx_output})
endforeach()
