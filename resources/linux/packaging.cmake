# Installation and the Debian package (`cpack -G DEB` in the build tree): dpexplorer and dpx, the
# desktop entry, the AppStream metainfo, the icon (SVG and the hicolor PNG sizes rendered from it
# here), dpx's man page. Included by the top-level CMakeLists.txt, whose scope CPack reads.
#
# Nothing else is read at run time: the datasets, the presets and the FFTW wisdom are compiled in
# (core/training/datasets.cmake, ui/presets.qrc, core/numerics/fftw_wisdom.cmake), and the
# project's libraries are static, so the executables need only the Debian libraries in Depends.
include(GNUInstallDirs)
# Debian keeps a package's documents under the package's name (GNUInstallDirs' DOCDIR would be
# the CMake project's).
set(dpx_doc_dir ${CMAKE_INSTALL_DATADIR}/doc/dpexplorer)
set(dpx_app_id io.github.dpexplorer.DPExplorer)
set(dpx_linux_dir ${CMAKE_CURRENT_LIST_DIR})
set(dpx_packaging_dir ${CMAKE_BINARY_DIR}/packaging)

# The PNG sizes are rendered from the SVG when it changes, so the two cannot drift apart and no
# binary file is committed; the renderer is a few lines of QSvgRenderer (Qt6::Svg is a dependency
# anyway), which draws the same picture the app's window icon does.
# A build tool, not the product: without dpx_build_flags, so a sanitizer build does not run it
# under LeakSanitizer (which would fail the build on Qt's allocations kept until exit).
add_executable(dpx_render_icon ${dpx_linux_dir}/render_icon.cpp)
target_link_libraries(dpx_render_icon PRIVATE Qt6::Gui Qt6::Svg)
target_compile_options(dpx_render_icon PRIVATE -Wall -Wextra)
set(dpx_icon_svg ${dpx_linux_dir}/${dpx_app_id}.svg)
set(dpx_icon_pngs "")
foreach(size 16 32 48 64 128 256)
  set(png ${dpx_packaging_dir}/icons/${size}x${size}/${dpx_app_id}.png)
  add_custom_command(OUTPUT ${png}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dpx_packaging_dir}/icons/${size}x${size}
    COMMAND dpx_render_icon ${dpx_icon_svg} ${size} ${png}
    DEPENDS dpx_render_icon ${dpx_icon_svg}
    COMMENT "Rendering the ${size}×${size} icon" VERBATIM)
  list(APPEND dpx_icon_pngs ${png})
  install(FILES ${png} DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps)
endforeach()

# Debian policy: manual pages compressed with gzip -9, without a timestamp (-n) so that the
# package is reproducible.
find_program(GZIP_EXECUTABLE gzip REQUIRED)
set(dpx_man_page ${dpx_packaging_dir}/dpx.1.gz)
add_custom_command(OUTPUT ${dpx_man_page}
  COMMAND ${GZIP_EXECUTABLE} -9 -n -c ${PROJECT_SOURCE_DIR}/docs/dpx.1 > ${dpx_man_page}
  DEPENDS ${PROJECT_SOURCE_DIR}/docs/dpx.1
  COMMENT "Compressing dpx's man page" VERBATIM)
add_custom_target(dpx_desktop_files ALL DEPENDS ${dpx_icon_pngs} ${dpx_man_page})

install(TARGETS dpexplorer dpx RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${dpx_linux_dir}/${dpx_app_id}.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${dpx_linux_dir}/${dpx_app_id}.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
install(FILES ${dpx_icon_svg} DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
install(FILES ${dpx_man_page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
# The embedded datasets' provenance and licences travel with the binaries that embed them.
install(FILES ${PROJECT_SOURCE_DIR}/resources/datasets/ATTRIBUTION.md
  DESTINATION ${dpx_doc_dir} RENAME DATASETS.md)
install(FILES ${PROJECT_SOURCE_DIR}/docs/USER_GUIDE.md ${PROJECT_SOURCE_DIR}/docs/REFERENCES.md
  DESTINATION ${dpx_doc_dir})

set(DPX_PACKAGE_MAINTAINER "DP Explorer maintainers <maintainers@dpexplorer.invalid>"
  CACHE STRING "The Maintainer field of the Debian package")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME dpexplorer)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "DP Explorer")
set(CPACK_PACKAGE_CONTACT ${DPX_PACKAGE_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "privacy-utility trade-off explorer for differentially private training")
# Lines under 80 columns, as Debian's package tools show them.
string(JOIN "\n" CPACK_PACKAGE_DESCRIPTION
  "DP Explorer shows how the knobs of differentially private training move its"
  "privacy guarantee and its accuracy: every privacy analysis of the source"
  "papers (the moments/RDP accountant, Gaussian DP, exact composition by privacy"
  "loss distributions, the Langevin DP-SGLD bound, last-iterate cyclic DP-SGD,"
  "output perturbation, the SG-MCMC step-size bounds) redraws as a slider moves."
  "The same knobs drive a parallel private trainer, the privacy-utility frontier"
  "and a membership-inference audit. dpx is its command line, for scripts and"
  "audits.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # dpexplorer_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${DPX_PACKAGE_MAINTAINER})
# dpkg-shlibdeps (dpkg-dev) reads Depends from the executables' shared libraries. Qt's platform
# plugins are loaded, not linked: libqt6gui6 brings xcb's and the offscreen one, and Wayland's is
# a recommendation, as Debian's own Qt applications have it.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qt6-wayland")
# The trainer offers Fashion-MNIST when Debian's package of it is installed.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "dataset-fashion-mnist")
set(CPACK_STRIP_FILES ON)
# A tree configured with DPX_NATIVE (the default) builds for this machine's CPU: its package runs
# here, and may stop with "illegal instruction" on an older CPU. Packages for other machines come
# from a tree configured with -DDPX_NATIVE=OFF.
if(DPX_NATIVE)
  message(STATUS "DPX_NATIVE is ON: the Debian package (cpack -G DEB) is for this machine's CPU")
endif()
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
