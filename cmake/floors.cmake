# The floors (docs/layout.md), enforced by the build itself, not only by a test.
#
# 1. Each folder's targets see only their own folder: `<build>/floors/<folder>` holds one symbolic link,
#    `<folder>` -> the source folder, and is the one include directory a folder's library exports. What a target
#    may include from another folder comes from the libraries it links, so `#include "controller/..."` in a folder
#    that does not link liken_controller (one on a lower floor) is "No such file or directory".
# 2. A build step that every folder target waits for runs test/include_floors_test.py on the sources: it refuses an
#    include of a folder on the same floor or above, and links that differ from the includes.
#
# liken_floors(): call once, after every folder's add_subdirectory; each subdirectory of the top level but test/
# is a folder. A folder target that exports the whole source root is a configure error.

find_package(Python3 REQUIRED COMPONENTS Interpreter)

function(liken_floors)
  get_property(folders DIRECTORY ${PROJECT_SOURCE_DIR} PROPERTY SUBDIRECTORIES)
  set(checked ${PROJECT_BINARY_DIR}/floors/checked.stamp)
  set(inputs ${PROJECT_SOURCE_DIR}/test/include_floors_test.py ${PROJECT_SOURCE_DIR}/test/self_test_report.py)
  set(all_targets)
  set(names)
  foreach(dir ${folders})
    get_filename_component(folder ${dir} NAME)
    if(folder STREQUAL "test")
      continue()
    endif()
    list(APPEND names ${folder})
    set(view ${PROJECT_BINARY_DIR}/floors/${folder})
    file(MAKE_DIRECTORY ${view})
    file(CREATE_LINK ${dir} ${view}/${folder} SYMBOLIC)
    file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${dir}/*.h ${dir}/*.cc ${dir}/CMakeLists.txt)
    list(APPEND inputs ${sources})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target ${targets})
      get_target_property(type ${target} TYPE)
      if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY|INTERFACE_LIBRARY|EXECUTABLE)$")
        continue()
      endif()
      foreach(property INCLUDE_DIRECTORIES INTERFACE_INCLUDE_DIRECTORIES)
        get_target_property(dirs ${target} ${property})
        if(dirs AND (PROJECT_SOURCE_DIR IN_LIST dirs OR "${PROJECT_SOURCE_DIR}/" IN_LIST dirs))
          message(FATAL_ERROR "${folder}/CMakeLists.txt: ${target} has the source root as an include directory, "
            "so every floor would be visible to it; cmake/floors.cmake gives it ${folder}/ and what it links")
        endif()
      endforeach()
      if(type STREQUAL "EXECUTABLE")
        target_include_directories(${target} PRIVATE ${view})
      elseif(type STREQUAL "INTERFACE_LIBRARY")
        target_include_directories(${target} INTERFACE ${view})
        continue() # nothing of its own to compile, so nothing to hold back
      else()
        target_include_directories(${target} PUBLIC ${view})
      endif()
      list(APPEND all_targets ${target})
    endforeach()
  endforeach()

  list(JOIN names "," names)
  add_custom_command(OUTPUT ${checked}
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/test/include_floors_test.py --quiet --folders ${names}
            ${PROJECT_SOURCE_DIR}
    COMMAND ${CMAKE_COMMAND} -E touch ${checked}
    DEPENDS ${inputs}
    COMMENT "Checking the floors: no include of a folder on the same floor or above, links equal to includes"
    VERBATIM)
  add_custom_target(liken_floors_check DEPENDS ${checked})
  foreach(target ${all_targets})
    add_dependencies(${target} liken_floors_check)
  endforeach()
endfunction()
