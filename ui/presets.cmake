# Presets: the versioned JSON preset format (presets.h) and the built-in set compiled in from
# resources/presets/ through presets.qrc (AUTORCC; initialised by builtinPresets() because dpx_ui
# is a static library). Included by ui/CMakeLists.txt.
target_sources(dpx_ui PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/presets.cpp
  ${CMAKE_CURRENT_LIST_DIR}/presets.h
  ${CMAKE_CURRENT_LIST_DIR}/presets.qrc)
