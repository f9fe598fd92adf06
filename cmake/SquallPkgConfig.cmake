# SPDX-License-Identifier: BSD-3-Clause
# squall_pkg_config(target DESCRIPTION text [REQUIRES modules...] [CFLAGS flags...] [LIBS flags...]):
# installs <libdir>/pkgconfig/<library file name>.pc for the library target (squall-kf.pc for
# libsquall-kf). Its paths are relative to the .pc file (${pcfiledir}), so the installed tree
# may be moved and `cmake --install --prefix` needs no reconfiguring.
file(RELATIVE_PATH squall_pc_prefix /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" squall_pc_prefix "${squall_pc_prefix}")

function(squall_pkg_config target)
  cmake_parse_arguments(PARSE_ARGV 1 pc "" "DESCRIPTION" "REQUIRES;CFLAGS;LIBS")
  get_target_property(pc_library ${target} OUTPUT_NAME)
  set(pc_module ${pc_library})
  set(pc_prefix ${squall_pc_prefix})
  list(JOIN pc_REQUIRES ", " pc_requires)
  list(JOIN pc_CFLAGS " " pc_cflags)
  list(JOIN pc_LIBS " " pc_libs)
  set(pc_description ${pc_DESCRIPTION})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/squall.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/${pc_module}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${pc_module}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
