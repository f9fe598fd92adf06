# SPDX-License-Identifier: BSD-3-Clause
# squall_parmacs_program(name prog.C [more.C more.H ...] [AS_IS]): an executable from a program
# written with the PARMACS macros. Each .C (or .U) goes through m4 with Squall's parmacs.m4
# into a .c compiled as C against squall::tsm; each .H into a .h beside them, which the .c
# files' #include "x.h" finds. The global property SQUALL_PARMACS_M4 names the macro file:
# the build tree's inside Squall, the installed one after find_package(Squall).
# AS_IS leaves out -fPIC and -z now, as a plain `cc prog.c` would.
find_program(SQUALL_M4 m4)

function(squall_parmacs_program name)
  cmake_parse_arguments(PARSE_ARGV 1 opt "AS_IS" "" "")
  if(NOT opt_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "squall_parmacs_program(${name}): no source; usage: squall_parmacs_program(name prog.C [more.C more.H ...] [AS_IS])")
  endif()
  if(NOT SQUALL_M4)
    message(FATAL_ERROR "squall_parmacs_program(${name}): m4 was not found; install it (Debian: apt-get install m4)")
  endif()
  get_property(macros GLOBAL PROPERTY SQUALL_PARMACS_M4)
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/${name}.parmacs)
  set(outputs "")
  set(source_dirs "")
  foreach(source IN LISTS opt_UNPARSED_ARGUMENTS)
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} OUTPUT_VARIABLE input)
    cmake_path(GET input STEM LAST_ONLY stem)
    cmake_path(GET input EXTENSION LAST_ONLY extension)
    cmake_path(GET input PARENT_PATH input_dir)
    if(extension STREQUAL ".H")
      set(expanded ${out_dir}/${stem}.h)
    elseif(extension STREQUAL ".C" OR extension STREQUAL ".U")
      set(expanded ${out_dir}/${stem}.c)
    else()
      message(FATAL_ERROR "squall_parmacs_program(${name}): ${source} is not a .C, .U or .H file")
    endif()
    if(expanded IN_LIST outputs)
      message(FATAL_ERROR "squall_parmacs_program(${name}): two sources would both become ${expanded}")
    endif()
    # -s: #line directives, so that compiler messages name the lines of prog.C.
    add_custom_command(OUTPUT ${expanded}
      COMMAND sh -c "\"$0\" -s -Ulen -Uindex \"$1\" \"$2\" > \"$3\"" ${SQUALL_M4} ${macros} ${input} ${expanded}
      DEPENDS ${input} ${macros}
      COMMENT "m4 PARMACS ${source}" VERBATIM)
    list(APPEND outputs ${expanded})
    list(APPEND source_dirs ${input_dir})
  endforeach()
  list(REMOVE_DUPLICATES source_dirs)
  file(MAKE_DIRECTORY ${out_dir})
  add_executable(${name} ${outputs})
  target_include_directories(${name} PRIVATE ${source_dirs})  # the sources' own .h files
  target_compile_options(${name} PRIVATE -Wall -Wno-unused-variable -Wno-unused-but-set-variable)
  if(NOT opt_AS_IS)
    # -fPIC: no copy relocations, so no library variable (stdout, a sanitizer's) lives among
    # the program's globals, which become shared memory.
    target_compile_options(${name} PRIVATE -fPIC)
    # -z now: the GOT is filled at load and sits in the read-only RELRO part, not on the
    # first shared page beside the globals (lazy binding would write that page on each
    # node's first call of each library function).
    target_link_options(${name} PRIVATE -Wl,-z,now)
  endif()
  target_link_libraries(${name} PRIVATE squall::tsm m)
endfunction()
