# The membership-inference audit (core/audit/membership_inference.h): attacks, ROC and the
# empirical ε lower bounds. Included by core/CMakeLists.txt.
target_sources(dpx_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/epsilon_lower_bound.cpp
  ${CMAKE_CURRENT_LIST_DIR}/membership_inference.cpp
  ${CMAKE_CURRENT_LIST_DIR}/roc.cpp)
